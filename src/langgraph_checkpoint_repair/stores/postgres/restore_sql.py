"""Putting a prune's rows back (`undo`) and dropping its archive (`forget`): the SQL."""

from __future__ import annotations

from collections.abc import Sequence

from .prune_sql import TABLES

IS_PRUNE_SQL = "SELECT 1 FROM langgraph_repair_runs WHERE run_id = %s AND command = 'prune'"
ARCHIVED_THREADS_SQL = """
SELECT thread_id FROM langgraph_repair_pruned_checkpoints WHERE run_id = %s
UNION SELECT thread_id FROM langgraph_repair_pruned_writes WHERE run_id = %s
UNION SELECT thread_id FROM langgraph_repair_pruned_blobs WHERE run_id = %s
ORDER BY thread_id"""

RESTORE_PARENTS_SQL = """
UPDATE checkpoints c SET parent_checkpoint_id = p.parent_checkpoint_id
FROM langgraph_repair_pruned_parents p
WHERE p.run_id = %s AND p.thread_id = %s AND c.thread_id = %s
AND c.checkpoint_ns = p.checkpoint_ns AND c.checkpoint_id = p.checkpoint_id
AND c.parent_checkpoint_id IS NULL"""
"""A pointer the prune cleared is put back; one the application set since is left."""

ARCHIVES = (*(archive for archive, _ in TABLES.values()), "langgraph_repair_pruned_parents")
FORGET_THREAD_SQL = tuple(f"DELETE FROM {t} WHERE run_id = %s AND thread_id = %s" for t in ARCHIVES)
FORGET_RUN_SQL = tuple(f"DELETE FROM {t} WHERE run_id = %s" for t in ARCHIVES)


def restore_sql(table: str, columns: Sequence[str]) -> str:
    """Insert one thread's archived rows of `table` again, as they were; a row the
    store holds again (a second undo) is left."""
    archive, _ = TABLES[table]
    listed = ", ".join(columns)
    return (
        f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {archive} "
        "WHERE run_id = %s AND thread_id = %s ON CONFLICT DO NOTHING"
    )
