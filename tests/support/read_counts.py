"""What PostgreSQL read of one table: its own statistics counters, not time."""

from __future__ import annotations

import time
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


SETTLED_AFTER = 3
"""Equal readings in a row, a fifth of a second apart, that count as settled."""


def settled_reads(uri: str, table: str, tries: int = 40) -> Reads:
    """The table's counters once every backend that read it has published its reads. A
    backend publishes at most a second after it goes idle, and at its exit (a pool's
    connections end after the run that used them returns): until then its reads would
    be counted in the next measure instead."""
    found, same = reads(uri, table), 0
    for _ in range(tries):
        time.sleep(0.2)
        now = reads(uri, table)
        same = same + 1 if now == found else 0
        if same >= SETTLED_AFTER:
            break
        found = now
    return found
