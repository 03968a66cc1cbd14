"""The sync PostgreSQL pruner: thin I/O running the steps of `prune_sql` and `restore_sql`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg import Connection
from psycopg.rows import tuple_row

from ...retention.compact import Compaction
from ...retention.keep import StoredCheckpoint
from ...retention.outcome import Deleted, ThreadPruned
from ...retention.rules import PruneRules
from ..base import PAGE_SIZE, StoreNotReady
from ..copying import copy_steps
from . import base as sql
from . import copy_sql as cs
from . import privileges
from . import prune_sql as ps
from . import restore_sql as rs
from . import rollback_sql as rb
from .sync import PostgresStore

T = TypeVar("T")


class PostgresPruner:
    """Prunes, restores and forgets on a PostgresSaver's tables."""

    forget_needs = privileges.FORGET_NEEDS
    vacuums = False
    """Its file is given back by VACUUM FULL, which locks each table: left to the operator."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.store = PostgresStore(saver)
        self.columns: dict[str, list[str]] = {}

    def _rows(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self.store._rows(query, params)

    def ready(
        self, *, archive: bool, writes: bool, recorded: bool = True, compact: bool = False
    ) -> None:
        """The archive tables current and every privilege held, or `StoreNotReady` before
        anything is written; a dry run only reads the columns."""
        if writes and recorded:
            self._rows(sql.PROBE_SQL)  # a locked table fails here, before anything is recorded
            step = self.store._audit_step()
            if step == "migrate":
                self.store.migrate()
            elif step is not None:
                raise StoreNotReady(step)
        if writes:
            self._check(privileges.prune_needs(archive=archive, recorded=recorded, compact=compact))
        self.columns, lacking = self._table_columns()
        if archive and writes and lacking:
            raise StoreNotReady(ps.archive_lacks(lacking))

    def _table_columns(self) -> tuple[dict[str, list[str]], list[str]]:
        """LangGraph's tables' columns as they are now, and those the archive lacks."""
        return ps.missing_columns(self._rows(ps.COLUMNS_SQL, (ps.COLUMN_TABLES,)))

    def _check(self, needs: privileges.Needs) -> None:
        problem = privileges.problem(self._rows(*privileges.check_query(needs)))
        if problem is not None:
            raise StoreNotReady(problem)

    def thread_pages(self, threads: Sequence[str] | None) -> Iterator[list[str]]:
        after = ""
        while found := self._rows(ps.THREADS_SQL, (after, threads, threads, PAGE_SIZE)):
            yield [str(row[0]) for row in found]
            after = str(found[-1][0])

    def begin_run(self, run_id: str, arguments: dict[str, Any], command: str = "prune") -> None:
        self.store.begin_run(run_id, command, arguments)

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self.store.finish_run(run_id, summary)

    def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        """One thread, on one snapshot, all or nothing; another prune's thread is skipped."""
        return self._on_snapshot(thread_id, ps.prune_steps(run_id, thread_id, rules, self.columns))

    def run_threads(self, runs: Sequence[str], threads: Sequence[str] | None) -> list[str]:
        """The threads holding a checkpoint of `runs` (of `threads`, when given)."""
        found = self._rows(rb.RUN_THREADS_SQL, (list(runs), threads, threads))
        return [str(row[0]) for row in found]

    def rollback_thread(
        self, record: str, thread_id: str, runs: frozenset[str], rules: PruneRules
    ) -> ThreadPruned:
        """`runs` taken out of one thread, on one snapshot, archived under `record`."""
        steps = rb.rollback_steps(record, thread_id, runs, self.columns, rules)
        return self._on_snapshot(thread_id, steps)

    def _on_snapshot(self, thread_id: str, steps: ps.Steps[ThreadPruned]) -> ThreadPruned:
        """A thread's steps on one snapshot, all or nothing; a row that changed under
        them (`SerializationFailure`) leaves the thread as it was."""
        with self.store._connection() as conn:
            try:
                with _snapshot(conn):
                    return drive(conn, steps)
            except psycopg.errors.SerializationFailure:
                return ThreadPruned(thread_id, skipped="changed")

    def thread_rows(self, thread_id: str) -> list[StoredCheckpoint]:
        """A thread's checkpoints as a plan reads them (what `--compact` looks at)."""
        with self.store._connection() as conn:
            return drive(conn, ps.skeleton_steps(thread_id))

    def repoint(self, run_id: str, thread_id: str, found: Compaction, archive: bool) -> bool:
        with self.store._connection() as conn, conn.transaction():
            return drive(conn, ps.repoint_steps(run_id, thread_id, found, archive))

    def revert(self, run_id: str, thread_id: str, found: Compaction) -> None:
        with self.store._connection() as conn, conn.transaction():
            drive(conn, ps.revert_steps(run_id, thread_id, found))

    def pruned_threads(self, run_id: str) -> list[str] | None:
        """The threads a prune run archived rows of; None when the run is no prune."""
        if not self._rows(sql.RUN_EXISTS_SQL)[0][0]:
            return None  # no audit tables: no run of any kind
        if not self._rows(rs.IS_PRUNE_SQL, (run_id,)):
            return None
        return [str(row[0]) for row in self._rows(rs.ARCHIVED_THREADS_SQL, (run_id,) * 4)]

    def restore_needs(self, run_id: str) -> privileges.Needs:
        """What undoing `run_id` needs: more when the run compacted (`--compact`)."""
        if self._rows(rs.COMPACTED_SQL, (run_id,)):
            return privileges.COMPACTED_RESTORE_NEEDS
        return privileges.RESTORE_NEEDS

    def ready_to_restore(self, needs: privileges.Needs) -> None:
        self._check(needs)
        self.columns, _ = self._table_columns()

    def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        """A thread's archived rows put back, parent pointers included: one transaction."""
        with self.store._connection() as conn, conn.transaction():
            return drive(conn, rs.restore_steps(run_id, thread_id, self.columns))

    def forget(self, run_id: str) -> int:
        with self.store._connection() as conn, conn.transaction():
            return drive(conn, rs.forget_steps(run_id))

    def copy_thread(self, source: str, target: str) -> int:
        """Every row of `source` under `target`, from one snapshot (`stores.copying`)."""
        columns, _ = self._table_columns()
        with self.store._connection() as conn, _snapshot(conn):
            return drive(conn, copy_steps(source, target, columns, cs.COPY))


def drive(conn: Connection[Any], steps: ps.Steps[T]) -> T:
    """Run each statement of `steps`, sending it back its rows; what the steps return."""
    with conn.cursor(row_factory=tuple_row) as cursor:
        try:
            statement = next(steps)
            while True:
                cursor.execute(*statement)
                statement = steps.send(cursor.fetchall() if cursor.description else [])
        except StopIteration as done:
            result: T = done.value
            return result


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
