"""A prune on SQLite: its SQL. The archive lives in the store's own file, in tables named
`langgraph_repair_pruned_*`, each with its LangGraph table's columns and the run."""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from typing import Any, TypeVar

from langgraph.checkpoint.serde.base import SerializerProtocol

from ...decisions.plan import DETAIL_KEY
from ...retention.compact import COMPACT_KIND, Compaction, as_compacted
from ...retention.keep import StoredCheckpoint, ThreadPlan, planned, read_checkpoint
from ...retention.outcome import Deleted, ThreadPruned
from ...retention.rules import PruneRules

T = TypeVar("T")

TABLES = {
    "checkpoints": "langgraph_repair_pruned_checkpoints",
    "writes": "langgraph_repair_pruned_writes",
}
PARENTS = "langgraph_repair_pruned_parents"
RUNS = "langgraph_repair_prune_runs"
ARCHIVES = (*TABLES.values(), PARENTS)

RUNS_DDL = f"""CREATE TABLE IF NOT EXISTS {RUNS} (
    run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    finished_at TEXT, arguments TEXT, summary TEXT)"""
PARENTS_DDL = f"""CREATE TABLE IF NOT EXISTS {PARENTS} (
    run_id TEXT NOT NULL, thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT NOT NULL)"""
BEGIN_RUN_SQL = f"INSERT INTO {RUNS} (run_id, arguments) VALUES (?, ?)"
FINISH_RUN_SQL = f"UPDATE {RUNS} SET finished_at = CURRENT_TIMESTAMP, summary = ? WHERE run_id = ?"
IS_RUN_SQL = f"SELECT 1 FROM {RUNS} WHERE run_id = ?"
HAS_TABLE_SQL = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
ARCHIVED_THREADS_SQL = (
    " UNION ".join(f"SELECT thread_id FROM {a} WHERE run_id = ?" for a in ARCHIVES) + " ORDER BY 1"
)

THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ? ORDER BY thread_id LIMIT ?"""
SKELETON_SQL = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
FROM checkpoints WHERE thread_id = ?"""
ASKING_SQL = """
SELECT DISTINCT checkpoint_ns, checkpoint_id FROM writes
WHERE thread_id = ? AND channel = '__interrupt__'"""
"""The checkpoints of a thread holding a question (read for `--delete-idle`)."""
SENDS_SQL = """
SELECT DISTINCT checkpoint_ns, checkpoint_id FROM writes
WHERE thread_id = ? AND channel = '__pregel_tasks'"""

NAMED = """(checkpoint_ns, checkpoint_id) IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))"""
"""The (namespace, checkpoint id) pairs a JSON array names."""
WRITE_KEYS = """(checkpoint_ns, checkpoint_id, task_id, idx) IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
        json_extract(value, '$[2]'), json_extract(value, '$[3]') FROM json_each(?))"""
"""Pending writes named one by one (a rollback's, on the checkpoint its run started from)."""
CLEARED_SQL = f"""
INSERT INTO {PARENTS}
SELECT ?, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints
WHERE thread_id = ? AND {NAMED} AND parent_checkpoint_id IS NOT NULL"""
CLEAR_SQL = f"UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? AND {NAMED}"

_SAME_ROW = """p.run_id = ? AND p.thread_id = checkpoints.thread_id
    AND p.checkpoint_ns = checkpoints.checkpoint_ns
    AND p.checkpoint_id = checkpoints.checkpoint_id"""
RESTORE_PARENTS_SQL = f"""
UPDATE checkpoints SET parent_checkpoint_id = (
    SELECT p.parent_checkpoint_id FROM {PARENTS} p WHERE {_SAME_ROW})
WHERE thread_id = ? AND parent_checkpoint_id IS NULL
AND EXISTS (SELECT 1 FROM {PARENTS} p WHERE {_SAME_ROW})"""
"""A pointer the prune cleared is put back; one the application set since is left."""
_DETAIL = f"json_extract(CAST(s.metadata AS TEXT), '$.{DETAIL_KEY}"
SNAPSHOT_OF_RUN = f"""{_DETAIL}.kind') = '{COMPACT_KIND}' AND {_DETAIL}.run_id') = ?"""
SNAPSHOTS = f"""(checkpoint_ns, checkpoint_id) IN (
    SELECT s.checkpoint_ns, s.checkpoint_id FROM checkpoints s
    WHERE s.thread_id = ? AND json_valid(CAST(s.metadata AS TEXT)) AND {SNAPSHOT_OF_RUN}
    AND (? IS NULL OR s.checkpoint_ns = ? AND s.checkpoint_id = ?))"""
"""A run's compaction snapshots of one thread (thread id, run id), or only the one named
(its id, namespace and id again; all None for every one)."""
UNPOINT_SQL = f"""
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = ? AND (checkpoint_ns, parent_checkpoint_id) IN (
    SELECT s.checkpoint_ns, s.checkpoint_id FROM checkpoints s
    WHERE s.thread_id = ? AND json_valid(CAST(s.metadata AS TEXT)) AND {SNAPSHOT_OF_RUN})"""
"""Heads a compaction pointed at its snapshot (thread id, thread id, run id), cleared so
that their archived pointer is put back (`RESTORE_PARENTS_SQL`). The snapshots are
found once, not once per checkpoint of the thread (a long thread made that quadratic)."""
DROP_SNAPSHOTS_SQL = tuple(
    f"DELETE FROM {table} WHERE thread_id = ? AND {SNAPSHOTS}"
    for table in ("writes", "checkpoints")
)
KEEP_POINTER_SQL = f"""
INSERT INTO {PARENTS}
SELECT ?, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND parent_checkpoint_id = ?"""
REPOINT_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND parent_checkpoint_id = ?
RETURNING 1"""
FORGET_THREAD_SQL = tuple(f"DELETE FROM {a} WHERE run_id = ? AND thread_id = ?" for a in ARCHIVES)
FORGET_RUN_SQL = tuple(f"DELETE FROM {a} WHERE run_id = ?" for a in ARCHIVES)


ARCHIVE_INDEX_DDL = (
    *(f"CREATE INDEX IF NOT EXISTS {a}_run ON {a} (run_id, thread_id)" for a in TABLES.values()),
    f"CREATE INDEX IF NOT EXISTS {PARENTS}_run "
    f"ON {PARENTS} (run_id, thread_id, checkpoint_ns, checkpoint_id)",
)
"""Each archive table found by run and thread: undo and forget read one thread's rows of
one run at a time, which without it is a scan of every archived byte per thread."""


def archive_ddl(columns: Mapping[str, Sequence[str]]) -> list[str]:
    """The archive's tables, each with its LangGraph table's columns and the run."""
    copies = [
        f"CREATE TABLE IF NOT EXISTS {archive} (run_id TEXT NOT NULL, {', '.join(columns[table])})"
        for table, archive in TABLES.items()
    ]
    return [*copies, PARENTS_DDL, RUNS_DDL, *ARCHIVE_INDEX_DDL]


def selected(found: list[str], threads: Sequence[str] | None) -> list[str]:
    return found if threads is None else [t for t in found if t in threads]


def measure_sql(columns: Sequence[str], rows: str) -> str:
    """The `rows` named, counted and weighed (their columns' bytes added up)."""
    weight = " + ".join(f"COALESCE(length(CAST({c} AS BLOB)), 0)" for c in columns)
    return f"SELECT count(*), COALESCE(sum({weight}), 0) {rows}"


def archive_sql(table: str, columns: Sequence[str], rows: str) -> str:
    listed = ", ".join(columns)
    return f"INSERT INTO {TABLES[table]} (run_id, {listed}) SELECT ?, {listed} {rows}"


def restore_sql(table: str, columns: Sequence[str]) -> str:
    """One thread's archived rows of `table` inserted again; a row held again is left."""
    listed = ", ".join(columns)
    return (
        f"INSERT OR IGNORE INTO {table} ({listed}) SELECT {listed} FROM {TABLES[table]} "
        "WHERE run_id = ? AND thread_id = ?"
    )


Statement = tuple[str, Sequence[Any]]
Steps = Generator[Statement, list[tuple[Any, ...]], T]
"""The statements of one thread's work, each sent back its rows: the sync and async
pruners run the same steps (`prune.drive`, `aprune.adrive`)."""


def skeleton_steps(
    thread_id: str, serde: SerializerProtocol
) -> Steps[list[StoredCheckpoint] | None]:
    """A thread's checkpoints as a plan reads them; None when a row does not decode."""
    rows = yield SKELETON_SQL, (thread_id,)
    sends = {(str(ns), str(cid)) for ns, cid in (yield SENDS_SQL, (thread_id,))}
    try:
        return [stored_checkpoint(row, sends, serde) for row in rows]
    except Exception:
        return None


def repoint_steps(run_id: str, thread_id: str, found: Compaction, archive: bool) -> Steps[bool]:
    """The compacted head pointed at its snapshot, where it still points at its old
    parent (which the archive keeps); whether it was."""
    head = (thread_id, found.checkpoint_ns, found.head_id, found.parent_id)
    if archive:
        yield KEEP_POINTER_SQL, (run_id, *head)
    changed = yield REPOINT_SQL, (found.snapshot_id, *head)
    return bool(changed)


def revert_steps(run_id: str, thread_id: str, found: Compaction) -> Steps[None]:
    """The compacted head pointed back at its old parent; the run's snapshots deleted."""
    head = (thread_id, found.checkpoint_ns, found.head_id, found.snapshot_id)
    yield REPOINT_SQL, (found.parent_id, *head)
    yield from drop_snapshots(run_id, thread_id, found)


def drop_snapshots(run_id: str, thread_id: str, found: Compaction | None = None) -> Steps[None]:
    """A run's compaction snapshots of one thread (or only the one named) deleted."""
    one = (
        (None, None, None)
        if found is None
        else (found.snapshot_id, found.checkpoint_ns, found.snapshot_id)
    )
    for statement in DROP_SNAPSHOTS_SQL:
        yield statement, (thread_id, thread_id, run_id, *one)


def prune_steps(
    run_id: str,
    thread_id: str,
    rules: PruneRules,
    columns: Mapping[str, Sequence[str]],
    serde: SerializerProtocol,
) -> Steps[ThreadPruned]:
    """One thread's prune, inside its write transaction: read, plan, delete."""
    stored = yield from skeleton_steps(thread_id, serde)
    if stored is None:  # a row that does not decode: the thread is left as it is
        return ThreadPruned(thread_id, skipped="unreadable")
    if rules.compact and rules.dry_run:
        stored = as_compacted(stored, rules.compacted)
    plan = yield from planned(thread_id, stored, rules, ASKING_SQL)
    if isinstance(plan, ThreadPruned):
        return plan
    outcome = ThreadPruned(thread_id, whole=plan.whole)
    return (yield from carried_out(run_id, plan, columns, rules, outcome))


def carried_out(
    run_id: str,
    plan: ThreadPlan,
    columns: Mapping[str, Sequence[str]],
    rules: PruneRules,
    outcome: ThreadPruned,
) -> Steps[ThreadPruned]:
    """A thread's plan measured, then (unless dry) archived and deleted: what went (or
    would go) added to `outcome`."""
    thread_id = outcome.thread_id
    named = [("writes", NAMED, pairs(plan.deleted))]
    if plan.writes:
        named.append(("writes", WRITE_KEYS, write_keys(plan.writes)))
    named.append(("checkpoints", NAMED, pairs(plan.deleted)))
    for table, which, keys in named:
        rows = f"FROM {table} WHERE thread_id = ? AND {which}"
        (count, size), *_ = yield measure_sql(columns[table], rows), (thread_id, keys)
        outcome.deleted.add(table, int(count), int(size))
        if not rules.dry_run:
            if rules.archive:
                yield archive_sql(table, columns[table], rows), (run_id, thread_id, keys)
            yield f"DELETE {rows}", (thread_id, keys)
    if plan.orphaned and not rules.dry_run:
        orphans = pairs(plan.orphaned)
        if rules.archive:
            yield CLEARED_SQL, (run_id, thread_id, orphans)
        yield CLEAR_SQL, (thread_id, orphans)
    return outcome


def restore_steps(
    run_id: str, thread_id: str, columns: Mapping[str, Sequence[str]]
) -> Steps[Deleted]:
    """One thread's rows put back, its pointers restored, its archive emptied."""
    restored = Deleted()
    for table in TABLES:
        (count,), *_ = yield COUNT_ARCHIVED_SQL.format(archive=TABLES[table]), (run_id, thread_id)
        yield restore_sql(table, columns[table]), (run_id, thread_id)
        restored.add(table, int(count), 0)
    yield UNPOINT_SQL, (thread_id, thread_id, run_id)
    yield RESTORE_PARENTS_SQL, (run_id, thread_id, run_id)
    yield from drop_snapshots(run_id, thread_id)
    for statement in FORGET_THREAD_SQL:
        yield statement, (run_id, thread_id)
    return restored


def forget_steps(run_id: str) -> Steps[int]:
    dropped = 0
    for archive in ARCHIVES:
        (count,), *_ = yield f"SELECT count(*) FROM {archive} WHERE run_id = ?", (run_id,)
        yield f"DELETE FROM {archive} WHERE run_id = ?", (run_id,)
        dropped += int(count)
    return dropped


COUNT_ARCHIVED_SQL = "SELECT count(*) FROM {archive} WHERE run_id = ? AND thread_id = ?"


def write_keys(writes: Mapping[str, Sequence[tuple[str, str, int]]]) -> str:
    """(namespace, checkpoint id, task id, idx) of each write, as `WRITE_KEYS` reads them."""
    return json.dumps([[ns, *key] for ns, found in writes.items() for key in found])


def pairs(ids: Mapping[str, Sequence[str]]) -> str:
    """(namespace, checkpoint id) pairs as the JSON array `NAMED` reads."""
    return json.dumps([[ns, i] for ns, found in ids.items() for i in found])


def stored_checkpoint(
    row: Sequence[Any], sends: set[tuple[str, str]], serde: SerializerProtocol
) -> StoredCheckpoint:
    """A checkpoint row, decoded, as a plan reads it."""
    ns, cid, parent, kind, blob, meta = row
    metadata = json.loads(meta) if meta else {}
    return read_checkpoint((ns, cid, parent), serde.loads_typed((kind, blob)), metadata, sends)
