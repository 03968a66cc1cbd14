"""Stores of many threads, quickly: real rows written by LangGraph's saver, copied on
the server under new thread ids (checkpoints, blobs and writes alike)."""

from __future__ import annotations

import hashlib
from typing import Any

import psycopg

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
_COPY_SQL = """
INSERT INTO {table} ({columns})
SELECT {renamed} FROM {table} t, generate_series(1, %(copies)s) AS n
WHERE t.thread_id = ANY(%(threads)s)"""


def multiply(uri: str, threads: list[str], copies: int) -> list[str]:
    """Copy each of `threads` `copies` times under ids that spread as random ids do
    (`<12 hex digits of md5('<thread>~<n>')>~<thread>`); the new thread ids."""
    with psycopg.connect(uri, autocommit=True) as conn:
        for table in TABLES:
            columns = [
                str(row[0])
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = current_schema() AND table_name = %s"
                    " ORDER BY ordinal_position",
                    (table,),
                ).fetchall()
            ]
            renamed = ", ".join(
                "substr(md5(t.thread_id || '~' || n), 1, 12) || '~' || t.thread_id"
                if c == "thread_id"
                else f"t.{c}"
                for c in columns
            )
            params: dict[str, Any] = {"copies": copies, "threads": threads}
            conn.execute(
                _COPY_SQL.format(table=table, columns=", ".join(columns), renamed=renamed),
                params,
            )
    return [
        f"{hashlib.md5(f'{t}~{n}'.encode()).hexdigest()[:12]}~{t}"
        for t in threads
        for n in range(1, copies + 1)
    ]
