"""The sync SQLite pruner, on the saver's own connection: thin I/O running the steps of
`prune_sql`.

Each thread is pruned inside one `BEGIN IMMEDIATE` transaction: SQLite keeps every
other writer out while its rows are read and deleted, so the plan and the deletes see
the same rows (a dry run reads inside a plain transaction). SQLite keeps checkpoints
whole, values inside, so a row is decoded to learn which channels it stores; a thread
holding a row that does not decode is left as it is (`unreadable`). The archive lives
in the same file, in tables named `langgraph_repair_pruned_*`, made by the first prune.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from ...retention.compact import Compaction
from ...retention.keep import StoredCheckpoint
from ...retention.outcome import Deleted, ThreadPruned
from ...retention.rules import PruneRules
from ..base import PAGE_SIZE
from ..copying import copy_steps
from . import base as sql
from . import copy_sql as cs
from . import prune_sql as ps
from . import rollback_sql as rb

T = TypeVar("T")


class SqlitePruner:
    """Prunes, restores and forgets on a SqliteSaver's file."""

    forget_needs = None
    vacuums = True

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self.conn: sqlite3.Connection = saver.conn  # type: ignore[attr-defined]
        self.lock: threading.Lock = saver.lock  # type: ignore[attr-defined]
        self.writing = sql.writing_lock(saver)
        self.columns: dict[str, list[str]] = {}

    def ready(
        self, *, archive: bool, writes: bool, recorded: bool = True, compact: bool = False
    ) -> None:
        """The archive's tables made (a dry run makes nothing)."""
        with self.lock:
            self.columns = {table: self._columns(table) for table in ps.TABLES}
            if writes and (archive or recorded):
                for statement in ps.archive_ddl(self.columns):
                    self.conn.execute(statement)
                self.conn.commit()

    def _columns(self, table: str) -> list[str]:
        return [str(row[1]) for row in self.conn.execute(f"PRAGMA table_info({table})")]

    def thread_pages(self, threads: Sequence[str] | None) -> Iterator[list[str]]:
        after = ""
        while True:
            with self.lock:
                found = [str(r[0]) for r in self.conn.execute(ps.THREADS_SQL, (after, PAGE_SIZE))]
            if not found:
                return
            yield ps.selected(found, threads)
            after = found[-1]

    def begin_run(self, run_id: str, arguments: dict[str, Any], command: str = "prune") -> None:
        self._commit(ps.BEGIN_RUN_SQL, (run_id, json.dumps({**arguments, "command": command})))

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self._commit(ps.FINISH_RUN_SQL, (json.dumps(summary), run_id))

    def _commit(self, query: str, params: Sequence[Any]) -> None:
        with self.writing, self.lock:
            self.conn.execute(query, params)
            self.conn.commit()

    def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        steps = ps.prune_steps(run_id, thread_id, rules, self.columns, self.saver.serde)
        return self._in_transaction(steps, "BEGIN" if rules.dry_run else sql.BEGIN_SQL)

    def run_threads(self, runs: Sequence[str], threads: Sequence[str] | None) -> list[str]:
        """The threads holding a checkpoint of `runs` (of `threads`, when given)."""
        found = self._run_threads(json.dumps(list(runs)))
        return ps.selected(found, threads)

    def _run_threads(self, runs: str) -> list[str]:
        with self.lock:
            return [str(row[0]) for row in self.conn.execute(rb.RUN_THREADS_SQL, (runs,))]

    def rollback_thread(
        self, record: str, thread_id: str, runs: frozenset[str], rules: PruneRules
    ) -> ThreadPruned:
        """`runs` taken out of one thread, in one write transaction, archived under
        `record`."""
        steps = rb.rollback_steps(record, thread_id, runs, self.columns, rules, self.saver.serde)
        return self._in_transaction(steps, "BEGIN" if rules.dry_run else sql.BEGIN_SQL)

    def thread_rows(self, thread_id: str) -> list[StoredCheckpoint] | None:
        """A thread's checkpoints as a plan reads them (what `--compact` looks at)."""
        return self._in_transaction(ps.skeleton_steps(thread_id, self.saver.serde), "BEGIN")

    def repoint(self, run_id: str, thread_id: str, found: Compaction, archive: bool) -> bool:
        return self._in_transaction(ps.repoint_steps(run_id, thread_id, found, archive))

    def revert(self, run_id: str, thread_id: str, found: Compaction) -> None:
        self._in_transaction(ps.revert_steps(run_id, thread_id, found))

    def pruned_threads(self, run_id: str) -> list[str] | None:
        """The threads a prune run archived rows of; None when the run is no prune."""
        with self.lock:
            if self.conn.execute(ps.HAS_TABLE_SQL, (ps.RUNS,)).fetchone() is None:
                return None
            if not self.conn.execute(ps.IS_RUN_SQL, (run_id,)).fetchall():
                return None
            self.columns = {table: self._columns(table) for table in ps.TABLES}
            found = self.conn.execute(ps.ARCHIVED_THREADS_SQL, (run_id,) * len(ps.ARCHIVES))
            return [str(row[0]) for row in found]

    def restore_needs(self, run_id: str) -> None:
        """SQLite has no roles: nothing to check."""

    def ready_to_restore(self, needs: object) -> None:
        """SQLite has no roles; an archive an earlier release made gets its indexes."""
        with self.writing, self.lock:
            for statement in ps.ARCHIVE_INDEX_DDL:
                self.conn.execute(statement)
            self.conn.commit()

    def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        return self._in_transaction(ps.restore_steps(run_id, thread_id, self.columns))

    def copy_thread(self, source: str, target: str) -> int:
        """Every row of `source` under `target`, in one write transaction
        (`stores.copying`)."""
        with self.lock:
            columns = {table: self._columns(table) for table in cs.COPY.tables}
        return self._in_transaction(copy_steps(source, target, columns, cs.COPY))

    def forget(self, run_id: str) -> int:
        return self._in_transaction(ps.forget_steps(run_id))

    def vacuum(self) -> None:
        """The file rewritten without its free pages (no transaction may be open)."""
        with self.writing, self.lock:
            self.conn.execute("VACUUM")

    def _in_transaction(self, steps: ps.Steps[T], begin: str = sql.BEGIN_SQL) -> T:
        """`steps` in one transaction, committed unless they raise."""
        with self.writing, self.lock:
            self.conn.execute(begin)
            try:
                done = drive(self.conn, steps)
            except BaseException:
                self.conn.execute(sql.ROLLBACK_SQL)
                raise
            self.conn.execute(sql.COMMIT_SQL)
            return done


def drive(conn: sqlite3.Connection, steps: ps.Steps[T]) -> T:
    """Run each statement of `steps`, sending it back its rows; what the steps return."""
    try:
        statement = next(steps)
        while True:
            statement = steps.send(conn.execute(*statement).fetchall())
    except StopIteration as done:
        result: T = done.value
        return result
