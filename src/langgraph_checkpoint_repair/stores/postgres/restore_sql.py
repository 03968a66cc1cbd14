"""Putting a prune's rows back (`undo`) and dropping its archive (`forget`): the SQL, and
the steps the sync and async pruners run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...retention.outcome import Deleted
from .prune_sql import (
    OUTCOME_TABLES,
    SNAPSHOT_OF_RUN,
    TABLES,
    UNPOINT_SQL,
    Steps,
    drop_snapshots,
)

IS_PRUNE_SQL = """
SELECT 1 FROM langgraph_repair_runs WHERE run_id = %s AND command IN ('prune', 'rollback')"""
"""Whether a run deleted rows into the archive: a prune, or a rollback of a run."""
ARCHIVED_THREADS_SQL = """
SELECT thread_id FROM langgraph_repair_pruned_checkpoints WHERE run_id = %s
UNION SELECT thread_id FROM langgraph_repair_pruned_writes WHERE run_id = %s
UNION SELECT thread_id FROM langgraph_repair_pruned_blobs WHERE run_id = %s
UNION SELECT thread_id FROM langgraph_repair_pruned_parents WHERE run_id = %s
ORDER BY thread_id"""

COMPACTED_SQL = """
SELECT 1 FROM langgraph_repair_runs WHERE run_id = %s AND arguments ->> 'compact' = 'true'"""
"""Whether a prune run compacted (its undo then also deletes its snapshots)."""
HAS_SNAPSHOTS_SQL = f"SELECT 1 FROM checkpoints WHERE thread_id = %s AND {SNAPSHOT_OF_RUN} LIMIT 1"

RESTORE_PARENTS_SQL = """
UPDATE checkpoints c SET parent_checkpoint_id = p.parent_checkpoint_id
FROM langgraph_repair_pruned_parents p
WHERE p.run_id = %s AND p.thread_id = %s AND c.thread_id = %s
AND c.checkpoint_ns = p.checkpoint_ns AND c.checkpoint_id = p.checkpoint_id
AND c.parent_checkpoint_id IS NULL"""
"""A pointer the prune cleared is put back; one the application set since is left."""

ARCHIVES = (*(archive for archive, _ in TABLES.values()), "langgraph_repair_pruned_parents")


def restore_sql(table: str, columns: Sequence[str]) -> str:
    """Insert one thread's archived rows of `table` again, as they were, counted; a row
    the store holds again (a second undo) is left."""
    archive, _ = TABLES[table]
    listed = ", ".join(columns)
    return (
        f"WITH put AS (INSERT INTO {table} ({listed}) SELECT {listed} FROM {archive} "
        "WHERE run_id = %s AND thread_id = %s ON CONFLICT DO NOTHING RETURNING 1) "
        "SELECT count(*) FROM put"
    )


def restore_steps(
    run_id: str, thread_id: str, columns: Mapping[str, Sequence[str]]
) -> Steps[Deleted]:
    """One thread's rows put back, its pointers restored, its archive emptied."""
    restored = Deleted()
    for table, named in OUTCOME_TABLES.items():
        (count,), *_ = yield restore_sql(table, columns[table]), (run_id, thread_id)
        restored.add(named, int(count), 0)
    compacted = yield HAS_SNAPSHOTS_SQL, (thread_id, run_id)
    if compacted:
        yield UNPOINT_SQL, (thread_id, thread_id, run_id)
    yield RESTORE_PARENTS_SQL, (run_id, thread_id, thread_id)
    if compacted:
        yield drop_snapshots(run_id, thread_id)
    for archive in ARCHIVES:
        yield f"DELETE FROM {archive} WHERE run_id = %s AND thread_id = %s", (run_id, thread_id)
    return restored


def forget_steps(run_id: str) -> Steps[int]:
    """A run's archive dropped; the rows it held, counted."""
    dropped = 0
    for archive in ARCHIVES:
        statement = f"WITH gone AS (DELETE FROM {archive} WHERE run_id = %s RETURNING 1) "
        (count,), *_ = yield statement + "SELECT count(*) FROM gone", (run_id,)
        dropped += int(count)
    return dropped
