"""The sync SQLite store: thin I/O over `base`, on the saver's own connection."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from ...codes import FindingCode
from ...decisions.plan import NewCheckpoint
from ...decisions.races import Planned, WriteOutcome, Written, head_moved, sibling_key, thread_key
from ...decisions.rewind import RowCopy, Rung, rung_from
from ...decisions.rewrites import (
    RestoreOutcome,
    RewritePlan,
    WriteRewrite,
    audit_rows,
    before_rewriting,
    restoring,
    write_from_row,
)
from ...decoding.integrity import StoredValue
from ..base import Head, Selection, put_new
from ..claims import claim
from ..generic import GenericStore
from ..stored_values import ThreadBlobs, key_params
from . import base as sql
from . import rewrites as sr
from . import values

_Done = TypeVar("_Done")


class SqliteStore(GenericStore):
    """SqliteSaver: keyset-paged SQL finds the head of each (thread, namespace)."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        super().__init__(saver)
        self.writing = sql.writing_lock(saver)
        self.conn: sqlite3.Connection = saver.conn  # type: ignore[attr-defined]
        self.lock: threading.Lock = saver.lock  # type: ignore[attr-defined]

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        after: tuple[str, str] | None = None
        while True:
            with self.lock:
                rows = self.conn.execute(*sql.heads_query(after, selection.page_size)).fetchall()
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            lost = {
                key: self._seeds_missing(key, selection) for key in sql.delta_heads(rows, selection)
            }
            yield sql.selected_heads(rows, selection, self.saver.serde, lost)

    def _seeds_missing(
        self, key: tuple[str, str], selection: Selection
    ) -> tuple[tuple[FindingCode, str], ...]:
        with self.lock:
            rows = self.conn.execute(sql.NAMESPACE_SQL, key).fetchall()
        return sql.seeds_missing(rows, self.saver.serde, selection.channels)

    def count_heads(self, selection: Selection) -> int | None:
        with self.lock:
            rows = self.conn.execute(sql.THREADS_SQL).fetchall()
        return sql.counted(rows, selection)

    def type_pages(self, all_checkpoints: bool) -> Iterator[ThreadBlobs]:
        """Pages of threads with the msgpack blobs of their heads (or whole history)."""
        after: str | None = None
        while True:
            with self.lock:
                found = self.conn.execute(*values.threads_query(after, sql.TYPES_PAGE))
                threads = [str(row[0]) for row in found.fetchall()]
                if not threads:
                    return
                rows: list[Any] = []
                for query in values.types_queries(threads, all_checkpoints):
                    rows += self.conn.execute(query, threads).fetchall()
            after = threads[-1]
            yield values.thread_blobs(threads, rows)

    def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None:
        with self.lock:
            checkpoint = self.conn.execute(values.CHECKPOINT_SQL, key).fetchone()
            writes = self.conn.execute(values.WRITES_SQL, key).fetchall()
        return values.stored_values(checkpoint, writes)

    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        with self.lock:
            row = self.conn.execute(sql.HEAD_ID_SQL, (thread_id, checkpoint_ns)).fetchone()
        return None if row is None else row[0]

    def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        with self.lock:
            rows = self.conn.execute(
                sql.ROW_TYPES_SQL, sql.thread_params(thread_id, checkpoint_ns)
            ).fetchall()
        return sql.row_types_of(rows)

    def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """Look at the head again and write `new` on it, all in one write transaction."""

        def put() -> None:
            put_new(self.saver, new, writes_first=False)

        return self._claimed(planned, new, put)

    rewinds = True

    def chain_link(self, key: tuple[str, str, str]) -> Rung | None:
        with self.lock:
            rows = self.conn.execute(sql.RUNG_SQL, key_params(key)).fetchall()
        return rung_from(rows)

    def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        """Copy the unreadable head's row on the rewind, claimed and looked at again in
        one write transaction, as an undo checkpoint is written."""

        def put() -> None:
            with self.lock:
                self.conn.execute(sql.COPY_SQL, copy.params())

        return self._claimed(planned, copy, put)

    def _claimed(self, planned: Planned, new: Written, put: Callable[[], None]) -> WriteOutcome:
        with claim(self.saver, thread_key(planned)) as mine:
            if not mine:
                return "claimed"
            return self._write_claimed(planned, new, put)

    def _write_claimed(
        self, planned: Planned, new: Written, put: Callable[[], None]
    ) -> WriteOutcome:
        with self.writing:
            moved = self._begin(planned, new)
            if moved is not None:
                return moved
            try:
                put()
            except BaseException:
                self._end(sql.ROLLBACK_SQL)
                raise
            self._end(sql.COMMIT_SQL)
        with self.lock:
            siblings = self.conn.execute(sql.SIBLINGS_SQL, sibling_key(planned, new)).fetchone()
        return "superseded" if siblings[0] else "repaired"

    def _begin(self, planned: Planned, new: Written) -> WriteOutcome | None:
        """Open the write transaction; None when the head is still the repair's source
        (otherwise the transaction is rolled back)."""
        with self.lock:
            self.saver.setup()  # type: ignore[attr-defined]  # its script commits: run it first
            self.conn.execute(sql.BEGIN_SQL)
            moved: WriteOutcome | None = "moved_on"
            try:
                row = self.conn.execute(sql.HEAD_ID_SQL, thread_key(planned)).fetchone()
                moved = head_moved(row[0], planned, new)
            finally:
                if moved is not None:
                    self.conn.execute(sql.ROLLBACK_SQL)
            return moved

    def _end(self, statement: str) -> None:
        """End what `put` left open: it commits itself, but may fail before it does."""
        with self.lock:
            if self.conn.in_transaction:
                self.conn.execute(statement)

    rewrites_writes = True

    def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        """Claim the thread, look at its head and each write's bytes again, record the
        original rows and change the writes: one write transaction (`rewrites`)."""
        with claim(self.saver, (plan.thread_id, plan.checkpoint_ns)) as mine:
            if not mine:
                return "claimed"
            with self.writing, self.lock:
                return self._in_transaction(lambda: self._rewrite(run_id, plan))

    def _rewrite(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        head = self.conn.execute(sql.HEAD_ID_SQL, (plan.thread_id, plan.checkpoint_ns)).fetchone()
        if head is None or head[0] != plan.checkpoint_id:
            return "moved_on"
        moved = before_rewriting(self._current(plan.writes), plan)
        if moved is not None:
            return moved
        if sr.drops_answer(plan) and self._answer_is_new(plan.head):
            return "moved_on"  # a new answer, equal to the old one, stored since the read
        self.conn.execute(sr.AUDIT_TABLE_SQL)
        self.conn.executemany(sr.RECORD_REWRITE_SQL, audit_rows(run_id, plan))
        for statement, params in sr.statements(plan.writes):
            self.conn.executemany(statement, params)
        return "repaired"

    def answer_is_new(self, key: tuple[str, str, str]) -> bool:
        with self.lock:
            return self._answer_is_new(key)

    def _answer_is_new(self, key: tuple[str, str, str]) -> bool:
        """`rewrites.answer_is_new`, the lock held."""
        found = self.conn.execute(sr.ANSWER_ORDER_SQL, sr.answer_order_params(key))
        return sr.answer_is_new(found.fetchone())

    def rewrites_of(self, run_id: str) -> list[WriteRewrite]:
        with self.lock:
            if not self.conn.execute(sr.HAS_REWRITES_SQL).fetchone()[0]:
                return []
            rows = self.conn.execute(sr.REWRITES_OF_SQL, (run_id,)).fetchall()
        return [write_from_row(row) for row in rows]

    def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[RestoreOutcome]:
        """Put back one checkpoint's rewritten writes, each only where its row is still
        as the repair left it; the outcome of each, in order."""
        with claim(self.saver, (writes[0].thread_id, writes[0].checkpoint_ns)) as mine:
            if not mine:
                return ["claimed"] * len(writes)
            with self.writing, self.lock:
                return self._in_transaction(lambda: self._restore(writes))

    def _restore(self, writes: Sequence[WriteRewrite]) -> list[RestoreOutcome]:
        outcomes, back = restoring(writes, self._current(writes))
        for statement, params in sr.statements(back):
            self.conn.executemany(statement, params)
        return outcomes

    def _current(self, writes: Sequence[WriteRewrite]) -> list[bytes | None]:
        """Each write's bytes now (None: no such row), inside the caller's transaction."""
        rows = [self.conn.execute(sr.CURRENT_VALUE_SQL, write.key).fetchone() for write in writes]
        return [None if row is None else bytes(row[0]) for row in rows]

    def _in_transaction(self, work: Callable[[], _Done]) -> _Done:
        """`work` in one write transaction, committed unless it raises."""
        self.conn.execute(sql.BEGIN_SQL)
        try:
            done = work()
        except BaseException:
            self.conn.execute(sql.ROLLBACK_SQL)
            raise
        self.conn.execute(sql.COMMIT_SQL)
        return done
