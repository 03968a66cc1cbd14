"""The sync PostgreSQL prune: thin I/O over `prune_sql` and `retention.keep`."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg import Connection
from psycopg.rows import tuple_row

from ...redact import scrubbed
from ...retention.keep import plan_thread, written_since
from ...retention.outcome import Deleted, ThreadPruned
from ...retention.rules import PruneRules
from ..base import PAGE_SIZE, StoreNotReady
from . import base as sql
from . import privileges
from . import prune_sql as ps
from . import restore_sql as rs
from .sync import PostgresStore

OUTCOME_TABLE = {
    "checkpoints": "checkpoints",
    "checkpoint_writes": "writes",
    "checkpoint_blobs": "blobs",
}


class PostgresPruner:
    """Prunes, restores and forgets on a PostgresSaver's tables."""

    restore_needs = privileges.RESTORE_NEEDS
    forget_needs = privileges.FORGET_NEEDS

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.store = PostgresStore(saver)
        self.columns: dict[str, list[str]] = {}

    def ready(self, *, archive: bool, writes: bool) -> None:
        """The archive tables current and every privilege held; `StoreNotReady` before
        anything is written. A dry run only reads the columns."""
        rows = self.store._rows
        if writes:
            rows(sql.PROBE_SQL)  # a locked table fails here, before anything is recorded
            step = self.store._audit_step()
            if step == "migrate":
                self.store.migrate()
            elif step is not None:
                raise StoreNotReady(step)
            needs = privileges.prune_needs(archive=archive)
            problem = privileges.problem(rows(*privileges.check_query(needs)))
            if problem is not None:
                raise StoreNotReady(problem)
        self.columns, lacking = ps.missing_columns(rows(ps.COLUMNS_SQL, (ps.COLUMN_TABLES,)))
        if archive and writes and lacking:
            raise StoreNotReady(
                f"the prune archive has no column for {', '.join(lacking)}: a prune would "
                "lose it; prune with --no-archive, or upgrade langgraph-checkpoint-repair"
            )

    def thread_pages(self, threads: Sequence[str] | None) -> Iterator[list[str]]:
        after = ""
        while True:
            found = self.store._rows(ps.THREADS_SQL, (after, threads, threads, PAGE_SIZE))
            if not found:
                return
            yield [str(row[0]) for row in found]
            after = str(found[-1][0])

    def begin_run(self, run_id: str, arguments: dict[str, Any]) -> None:
        self.store.begin_run(run_id, "prune", arguments)

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self.store._write(sql.FINISH_RUN_SQL, (json.dumps(scrubbed(summary)), run_id))

    def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        """One thread, on one snapshot, all or nothing."""
        with self._connection() as conn, self._thread_lock(conn, thread_id) as held:
            if not held:
                return ThreadPruned(thread_id, skipped="claimed")
            try:
                with _snapshot(conn):
                    return self._prune_in(conn, run_id, thread_id, rules)
            except psycopg.errors.SerializationFailure:
                return ThreadPruned(thread_id, skipped="changed")

    def _prune_in(
        self, conn: Connection[Any], run_id: str, thread_id: str, rules: PruneRules
    ) -> ThreadPruned:
        rows = _fetch(conn, ps.SKELETON_SQL, (thread_id,))
        if ps.js_rows(rows):
            return ThreadPruned(thread_id, skipped="langgraphjs")
        delta = ps.delta_channels(rows)
        held = _fetch(conn, ps.BLOBS_HELD_SQL, (thread_id, delta)) if delta else []
        stored = ps.stored_checkpoints(rows, held)
        if written_since(stored, rules.recent_after):
            return ThreadPruned(thread_id, skipped="recent")
        plan = plan_thread(stored, rules.keep_last)
        outcome = ThreadPruned(thread_id)
        if not plan.changes:
            return outcome
        for table in ("checkpoint_writes", "checkpoints", "checkpoint_blobs"):
            outcome.deleted.add(
                OUTCOME_TABLE[table], *self._delete(conn, table, run_id, thread_id, plan, rules)
            )
        if plan.orphaned and not rules.dry_run:
            conn.execute(
                ps.orphan_sql(rules.archive),
                ps.orphan_params(run_id, thread_id, plan, rules.archive),
            )
        return outcome

    def _delete(
        self,
        conn: Connection[Any],
        table: str,
        run_id: str,
        thread_id: str,
        plan: Any,
        rules: PruneRules,
    ) -> tuple[int, int]:
        if rules.dry_run:
            query = ps.measure_sql(table, self.columns[table])
            params = ps.measure_params(table, thread_id, plan)
        else:
            query = ps.delete_sql(table, self.columns[table], rules.archive)
            params = ps.delete_params(table, run_id, thread_id, plan, rules.archive)
        count, size = _fetch(conn, query, params)[0]
        return int(count), int(size)

    def pruned_threads(self, run_id: str) -> list[str] | None:
        """The threads a prune run archived rows of; None when the run is no prune."""
        if not self.store._rows(sql.RUN_EXISTS_SQL)[0][0]:
            return None  # no audit tables: no run of any kind
        if not self.store._rows(rs.IS_PRUNE_SQL, (run_id,)):
            return None
        return [str(row[0]) for row in self.store._rows(rs.ARCHIVED_THREADS_SQL, (run_id,) * 3)]

    def ready_to_restore(self, needs: privileges.Needs) -> None:
        problem = privileges.problem(self.store._rows(*privileges.check_query(needs)))
        if problem is not None:
            raise StoreNotReady(problem)
        self.columns, _ = ps.missing_columns(self.store._rows(ps.COLUMNS_SQL, (ps.COLUMN_TABLES,)))

    def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        """Put a thread's archived rows back, parent pointers included, and empty its
        archive: one transaction."""
        restored = Deleted()
        with self._connection() as conn, conn.transaction():
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                query = rs.restore_sql(table, self.columns[table])
                count = conn.execute(query, (run_id, thread_id)).rowcount
                restored.add(OUTCOME_TABLE[table], count, 0)
            conn.execute(rs.RESTORE_PARENTS_SQL, (run_id, thread_id, thread_id))
            for statement in rs.FORGET_THREAD_SQL:
                conn.execute(statement, (run_id, thread_id))
        return restored

    def forget(self, run_id: str) -> int:
        """Drop a prune run's archive; the rows it held, counted."""
        with self._connection() as conn, conn.transaction():
            return sum(conn.execute(q, (run_id,)).rowcount for q in rs.FORGET_RUN_SQL)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Connection[Any]]:
        with self.store._connection() as conn:
            yield conn

    @contextlib.contextmanager
    def _thread_lock(self, conn: Connection[Any], thread_id: str) -> Iterator[bool]:
        held = bool(_fetch(conn, ps.THREAD_LOCK_SQL, (thread_id,))[0][0])
        try:
            yield held
        finally:
            if held:
                conn.execute(ps.THREAD_UNLOCK_SQL, (thread_id,))


@contextlib.contextmanager
def _snapshot(conn: Connection[Any]) -> Iterator[None]:
    """A REPEATABLE READ transaction on an autocommit connection: committed when the
    block ends, rolled back when it raises."""
    conn.execute(ps.SNAPSHOT_SQL)
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _fetch(conn: Connection[Any], query: str, params: Any) -> list[tuple[Any, ...]]:
    with conn.cursor(row_factory=tuple_row) as cursor:
        return cursor.execute(query, params).fetchall()
