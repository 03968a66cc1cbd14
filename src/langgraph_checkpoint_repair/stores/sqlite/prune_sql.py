"""A prune on SQLite: its SQL. The archive lives in the store's own file, in tables named
`langgraph_repair_pruned_*`, each with its LangGraph table's columns and the run."""

from __future__ import annotations

from collections.abc import Sequence

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
    " UNION ".join(f"SELECT thread_id FROM {a} WHERE run_id = ?" for a in TABLES.values())
    + " ORDER BY 1"
)

THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ? ORDER BY thread_id LIMIT ?"""
SKELETON_SQL = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
FROM checkpoints WHERE thread_id = ?"""
SENDS_SQL = """
SELECT DISTINCT checkpoint_ns, checkpoint_id FROM writes
WHERE thread_id = ? AND channel = '__pregel_tasks'"""

NAMED = """(checkpoint_ns, checkpoint_id) IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))"""
"""The (namespace, checkpoint id) pairs a JSON array names."""
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
FORGET_THREAD_SQL = tuple(f"DELETE FROM {a} WHERE run_id = ? AND thread_id = ?" for a in ARCHIVES)
FORGET_RUN_SQL = tuple(f"DELETE FROM {a} WHERE run_id = ?" for a in ARCHIVES)


def archive_ddl(table: str, columns: Sequence[str]) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS {TABLES[table]} (run_id TEXT NOT NULL, {', '.join(columns)})"
    )


def measure_sql(table: str, columns: Sequence[str]) -> str:
    """The named rows of a thread, counted and weighed (their columns' bytes added up)."""
    weight = " + ".join(f"COALESCE(length(CAST({c} AS BLOB)), 0)" for c in columns)
    return f"SELECT count(*), COALESCE(sum({weight}), 0) {_named_rows(table)}"


def archive_sql(table: str, columns: Sequence[str]) -> str:
    listed = ", ".join(columns)
    return f"INSERT INTO {TABLES[table]} (run_id, {listed}) SELECT ?, {listed} {_named_rows(table)}"


def delete_sql(table: str) -> str:
    return f"DELETE {_named_rows(table)}"


def restore_sql(table: str, columns: Sequence[str]) -> str:
    """One thread's archived rows of `table` inserted again; a row held again is left."""
    listed = ", ".join(columns)
    return (
        f"INSERT OR IGNORE INTO {table} ({listed}) SELECT {listed} FROM {TABLES[table]} "
        "WHERE run_id = ? AND thread_id = ?"
    )


def _named_rows(table: str) -> str:
    return f"FROM {table} WHERE thread_id = ? AND {NAMED}"
