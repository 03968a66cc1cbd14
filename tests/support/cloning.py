"""Many threads from a few: copy the rows real graphs wrote for template threads under
new thread ids, in SQL, so a test can have a thousand real threads in a second."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from langgraph.checkpoint.sqlite import SqliteSaver

CHECKPOINT_COLUMNS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint"
WRITE_COLUMNS = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type"
POSTGRES_TABLES = {
    "checkpoints": f"{CHECKPOINT_COLUMNS}, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": f"{WRITE_COLUMNS}, blob",
}
SQLITE_TABLES = {
    "checkpoints": f"{CHECKPOINT_COLUMNS}, metadata",
    "writes": f"{WRITE_COLUMNS}, value",
}


def clone_name(template: str, n: int) -> str:
    return f"{template}~{n:04}"


def clone_postgres(uri: str, templates: Sequence[str], copies: int) -> None:
    """`copies` clones of each template thread: `<template>~0001`, ..."""
    with psycopg.connect(uri, autocommit=True) as conn:
        for table, columns in POSTGRES_TABLES.items():
            conn.execute(
                f"INSERT INTO {table} (thread_id, {columns}) "
                f"SELECT thread_id || '~' || lpad(n::text, 4, '0'), {columns} "
                f"FROM {table}, generate_series(1, %s) AS n WHERE thread_id = ANY(%s)",
                (copies, list(templates)),
            )
        # This schema's tables only: a database-wide ANALYZE waits on every other test's
        # schema, and deadlocks with a suite beside it dropping one.
        conn.execute(f"ANALYZE {', '.join(POSTGRES_TABLES)}")


def clone_sqlite(saver: SqliteSaver, templates: Sequence[str], copies: int) -> None:
    """The SQLite twin of `clone_postgres`, through the saver's own connection."""
    marks = ", ".join("?" for _ in templates)
    with saver.lock, saver.conn:
        for table, columns in SQLITE_TABLES.items():
            saver.conn.execute(
                f"WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?) "
                f"INSERT INTO {table} (thread_id, {columns}) "
                f"SELECT thread_id || '~' || substr('000' || k, -4), {columns} "
                f"FROM {table}, n WHERE thread_id IN ({marks})",
                (copies, *templates),
            )
