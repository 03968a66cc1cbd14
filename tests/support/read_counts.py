"""What PostgreSQL read of one table: its own statistics counters, not time."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

COUNTS_SQL = """
SELECT
    (SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables
        WHERE schemaname = current_schema() AND relname = %(table)s)
    + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes
        WHERE schemaname = current_schema() AND relname = %(table)s),
    (SELECT heap_blks_read + heap_blks_hit + coalesce(idx_blks_read, 0)
        + coalesce(idx_blks_hit, 0)
        FROM pg_statio_user_tables WHERE schemaname = current_schema() AND relname = %(table)s)"""


@dataclass(frozen=True)
class Reads:
    """Tuples (rows from sequential and sample scans, index entries, rows fetched
    through an index) and buffers (heap and index blocks, hit or read)."""

    tuples: int
    buffers: int

    def __sub__(self, other: Reads) -> Reads:
        return Reads(self.tuples - other.tuples, self.buffers - other.buffers)

    def __add__(self, other: Reads) -> Reads:
        return Reads(self.tuples + other.tuples, self.buffers + other.buffers)


def flush(conn: psycopg.Connection[object]) -> None:
    """Make the backend of `conn` publish what it read so far (it does before it
    answers this statement)."""
    conn.execute("SELECT pg_stat_force_next_flush()")


def reads(uri: str, table: str) -> Reads:
    """The counters of one table of the schema and its indexes now, read fresh."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(COUNTS_SQL, {"table": table}).fetchone()
    assert row is not None
    return Reads(int(row[0]), int(row[1]))
