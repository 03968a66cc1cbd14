"""What a PostgreSQL store holds, read with a connection of its own: every row of every
table (to prove a look wrote nothing) and the pending writes of one thread (to compare
their bytes before and after a rewrite and its undo)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver

WRITES_SQL = """
SELECT checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes
WHERE thread_id = %s ORDER BY checkpoint_id, task_id, idx"""


@contextmanager
def postgres_saver(uri: str) -> Iterator[PostgresSaver]:
    """A plain `PostgresSaver` as an application opens it, its tables set up."""
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0) as conn:
        saver = PostgresSaver(conn)  # type: ignore[arg-type]
        saver.setup()
        yield saver


def every_row(uri: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table in the test's schema, sorted, bytes as bytes."""
    with psycopg.connect(uri, autocommit=True) as conn:
        tables = [
            str(row[0])
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() ORDER BY 1"
            ).fetchall()
        ]
        return {
            table: sorted(
                (tuple(row) for row in conn.execute(f'SELECT * FROM "{table}"').fetchall()),
                key=repr,
            )
            for table in tables
        }


def pending_writes(uri: str, thread_id: str) -> list[tuple[Any, ...]]:
    """The thread's rows of `checkpoint_writes`: checkpoint, task, index, channel, type, bytes."""
    with psycopg.connect(uri, autocommit=True) as conn:
        rows = conn.execute(WRITES_SQL, (thread_id,)).fetchall()
    return [(*row[:5], bytes(row[5])) for row in rows]


def set_write_blob(uri: str, thread_id: str, channel: str, blob: bytes) -> None:
    """The application stores other bytes for the pending write to `channel` of the
    thread's head."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(
            "UPDATE checkpoint_writes SET blob = %s "
            "WHERE thread_id = %s AND channel = %s AND checkpoint_id = ("
            "  SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = %s)",
            (blob, thread_id, channel, thread_id),
        )


def rewrites_recorded(uri: str) -> list[tuple[Any, ...]]:
    """The audit's rewritten writes: run, thread, task, index, bytes before and after."""
    with psycopg.connect(uri, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('langgraph_repair_rewrites')").fetchone()
        if exists is None or exists[0] is None:
            return []
        rows = conn.execute(
            "SELECT run_id, thread_id, task_id, idx, original_blob, rewritten_blob "
            "FROM langgraph_repair_rewrites ORDER BY run_id, thread_id, task_id, idx"
        ).fetchall()
    return [(*row[:4], bytes(row[4]), bytes(row[5])) for row in rows]
