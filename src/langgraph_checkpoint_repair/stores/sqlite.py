"""SQLite (the embedded default): heads found by SQL, everything else through the saver.

A repair is written inside one `BEGIN IMMEDIATE` transaction on the saver's own
connection: the head is looked at again and the saver's `put` inserts the
repair before the transaction ends, while SQLite keeps every other writer out,
in this process or any other. Two runs cannot both repair a head, and no
application write can land between the last look and the repair. The
transaction is opened under the saver's lock and the saver's `put` (which takes
that lock itself) commits it; a lock kept per saver object keeps every other
run sharing that saver (so its connection) from opening a second transaction
on it meanwhile, and a head claimed by such a run is skipped (`claims`).
Undo checkpoints, and the row copies that undo a rewind, are written the same way.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from ..decisions.plan import NewCheckpoint
from ..decisions.races import Planned, WriteOutcome, Written, head_moved, sibling_key, thread_key
from ..decisions.rewind import RowCopy, Rung
from ..decisions.rewrites import (
    RestoreOutcome,
    RewritePlan,
    WriteRewrite,
    audit_rows,
    before_rewriting,
    restoring,
    write_from_row,
)
from ..decoding.integrity import StoredValue
from ..js.values import JsJsonPlusSerializer
from . import chain_rows
from . import sqlite_rewrites as sr
from . import stored_values as values
from .base import Head, Selection, aput_new, put_new
from .claims import claim
from .first_look.plain import js_checkpoint_verdict
from .generic import AsyncGenericStore, GenericStore

_Done = TypeVar("_Done")

_HEADS_SQL = """
SELECT h.thread_id, h.checkpoint_ns, h.checkpoint_id,
    CASE WHEN c.type = 'json' THEN c.checkpoint END,
    EXISTS (SELECT 1 FROM writes w WHERE w.thread_id = h.thread_id
        AND w.checkpoint_ns = h.checkpoint_ns AND w.checkpoint_id = h.checkpoint_id)
FROM (
    SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id
    FROM checkpoints
    {where}
    GROUP BY thread_id, checkpoint_ns
    ORDER BY thread_id, checkpoint_ns
    LIMIT ?
) AS h
JOIN checkpoints c ON c.thread_id = h.thread_id AND c.checkpoint_ns = h.checkpoint_ns
    AND c.checkpoint_id = h.checkpoint_id
ORDER BY h.thread_id, h.checkpoint_ns
"""
"""A page of heads, each with its row's JSON where it is LangGraph.js's (`json`, values
inline) and whether it has pending writes: what the first look of such a head reads."""
FIRST_HEADS_SQL = _HEADS_SQL.format(where="")
NEXT_HEADS_SQL = _HEADS_SQL.format(where="WHERE (thread_id, checkpoint_ns) > (?, ?)")
HEAD_ID_SQL = "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
ROW_TYPES_SQL = """
SELECT DISTINCT type FROM checkpoints WHERE thread_id = :thread_id AND checkpoint_ns = :ns
UNION
SELECT DISTINCT type FROM writes WHERE thread_id = :thread_id AND checkpoint_ns = :ns"""
"""The serializer types of one thread's rows (`formats`): read before writing on it."""
SIBLINGS_SQL = """
SELECT count(*) FROM checkpoints
WHERE thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns AND checkpoint_id > :source
    AND parent_checkpoint_id = :source AND checkpoint_id <> :repair"""

TYPES_PAGE = 500
"""Threads per page of the `types` inventory (each is a bound parameter: SQLite's
oldest builds take 999 at most)."""
THREADS_SQL = "SELECT thread_id FROM checkpoints GROUP BY thread_id, checkpoint_ns"


def _counted(rows: list[Any], selection: Selection) -> int:
    return sum(1 for (thread_id,) in rows if selection.takes(str(thread_id)))


def _selected(rows: list[Any], selection: Selection, serde: Any) -> list[Head]:
    """The page's heads, each LangGraph.js head with its first look's verdict
    (`plain.js_checkpoint_verdict`); every other head is loaded."""
    looks = selection.token_budget is None and isinstance(serde, JsJsonPlusSerializer)
    channels = list(selection.channels)
    heads = []
    for thread_id, ns, checkpoint_id, js_row, written in rows:
        if not selection.takes(str(thread_id)):
            continue
        head = Head(str(thread_id), str(ns), str(checkpoint_id))
        if looks and js_row is not None and not written:
            clean, found = js_checkpoint_verdict(bytes(js_row), channels)
            head = replace(head, maybe_broken=not clean, channels=found)
        heads.append(head)
    return heads


def heads_query(after: tuple[str, str] | None, page_size: int) -> tuple[str, tuple[Any, ...]]:
    """One page of heads after the keyset cursor; the first page has no cursor, so the
    empty thread id (which no cursor sorts before) is a thread like any other."""
    if after is None:
        return FIRST_HEADS_SQL, (page_size,)
    return NEXT_HEADS_SQL, (*after, page_size)


def _thread(thread_id: str, checkpoint_ns: str) -> dict[str, str]:
    return {"thread_id": thread_id, "ns": checkpoint_ns}


def _types(rows: list[Any]) -> frozenset[str]:
    return frozenset(str(row[0]) for row in rows if row[0] is not None)


_writing: weakref.WeakKeyDictionary[object, threading.Lock] = weakref.WeakKeyDictionary()
_awriting: weakref.WeakKeyDictionary[object, asyncio.Lock] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def _writing_lock(saver: object) -> threading.Lock:
    """One write transaction at a time on a saver's connection, whichever run opens it."""
    with _guard:
        return _writing.setdefault(saver, threading.Lock())


def _awriting_lock(saver: object) -> asyncio.Lock:
    with _guard:
        return _awriting.setdefault(saver, asyncio.Lock())


class SqliteStore(GenericStore):
    """SqliteSaver: keyset-paged SQL finds the head of each (thread, namespace)."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        super().__init__(saver)
        self.writing = _writing_lock(saver)
        self.conn: sqlite3.Connection = saver.conn  # type: ignore[attr-defined]
        self.lock: threading.Lock = saver.lock  # type: ignore[attr-defined]

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        after: tuple[str, str] | None = None
        while True:
            with self.lock:
                rows = self.conn.execute(*heads_query(after, selection.page_size)).fetchall()
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            yield _selected(rows, selection, self.saver.serde)

    def count_heads(self, selection: Selection) -> int | None:
        with self.lock:
            rows = self.conn.execute(THREADS_SQL).fetchall()
        return _counted(rows, selection)

    def type_pages(self, all_checkpoints: bool) -> Iterator[values.ThreadBlobs]:
        """Pages of threads with the msgpack blobs of their heads (or whole history)."""
        after: str | None = None
        while True:
            with self.lock:
                found = self.conn.execute(*values.sqlite_threads_query(after, TYPES_PAGE))
                threads = [str(row[0]) for row in found.fetchall()]
                if not threads:
                    return
                rows: list[Any] = []
                for query in values.sqlite_types_queries(threads, all_checkpoints):
                    rows += self.conn.execute(query, threads).fetchall()
            after = threads[-1]
            yield values.sqlite_thread_blobs(threads, rows)

    def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None:
        with self.lock:
            checkpoint = self.conn.execute(values.SQLITE_CHECKPOINT_SQL, key).fetchone()
            writes = self.conn.execute(values.SQLITE_WRITES_SQL, key).fetchall()
        return values.sqlite_values(checkpoint, writes)

    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        with self.lock:
            row = self.conn.execute(HEAD_ID_SQL, (thread_id, checkpoint_ns)).fetchone()
        return None if row is None else row[0]

    def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        with self.lock:
            rows = self.conn.execute(ROW_TYPES_SQL, _thread(thread_id, checkpoint_ns)).fetchall()
        return _types(rows)

    def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """Look at the head again and write `new` on it, all in one write transaction."""

        def put() -> None:
            put_new(self.saver, new, writes_first=False)

        return self._claimed(planned, new, put)

    rewinds = True

    def chain_link(self, key: tuple[str, str, str]) -> Rung | None:
        with self.lock:
            rows = self.conn.execute(chain_rows.SQLITE_RUNG_SQL, values.key_params(key)).fetchall()
        return chain_rows.rung_from(rows)

    def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        """Copy the unreadable head's row on the rewind, claimed and looked at again in
        one write transaction, as an undo checkpoint is written."""

        def put() -> None:
            with self.lock:
                self.conn.execute(chain_rows.SQLITE_COPY_SQL, copy.params())

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
                self._end("ROLLBACK")
                raise
            self._end("COMMIT")
        with self.lock:
            siblings = self.conn.execute(SIBLINGS_SQL, sibling_key(planned, new)).fetchone()
        return "superseded" if siblings[0] else "repaired"

    def _begin(self, planned: Planned, new: Written) -> WriteOutcome | None:
        """Open the write transaction; None when the head is still the repair's source
        (otherwise the transaction is rolled back)."""
        with self.lock:
            self.saver.setup()  # type: ignore[attr-defined]  # its script commits: run it first
            self.conn.execute("BEGIN IMMEDIATE")
            moved: WriteOutcome | None = "moved_on"
            try:
                row = self.conn.execute(HEAD_ID_SQL, thread_key(planned)).fetchone()
                moved = head_moved(row[0], planned, new)
            finally:
                if moved is not None:
                    self.conn.execute("ROLLBACK")
            return moved

    def _end(self, statement: str) -> None:
        """End what `put` left open: it commits itself, but may fail before it does."""
        with self.lock:
            if self.conn.in_transaction:
                self.conn.execute(statement)

    rewrites_writes = True

    def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        """Claim the thread, look at its head and each write's bytes again, record the
        original rows and change the writes: one write transaction (`sqlite_rewrites`)."""
        with claim(self.saver, (plan.thread_id, plan.checkpoint_ns)) as mine:
            if not mine:
                return "claimed"
            with self.writing, self.lock:
                return self._in_transaction(lambda: self._rewrite(run_id, plan))

    def _rewrite(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        head = self.conn.execute(HEAD_ID_SQL, (plan.thread_id, plan.checkpoint_ns)).fetchone()
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
        """`sqlite_rewrites.answer_is_new`, the lock held."""
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
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            done = work()
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return done


class AsyncSqliteStore(AsyncGenericStore):
    """AsyncSqliteSaver: the twin of `SqliteStore`."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        super().__init__(saver)
        self.writing = _awriting_lock(saver)
        self.conn: Any = saver.conn  # type: ignore[attr-defined]
        self.lock: asyncio.Lock = saver.lock  # type: ignore[attr-defined]

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        after: tuple[str, str] | None = None
        while True:
            rows = await self._all(*heads_query(after, selection.page_size))
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            yield _selected(rows, selection, self.saver.serde)

    async def count_heads(self, selection: Selection) -> int | None:
        return _counted(await self._all(THREADS_SQL, ()), selection)

    async def type_pages(self, all_checkpoints: bool) -> AsyncIterator[values.ThreadBlobs]:
        """The twin of `SqliteStore.type_pages`."""
        after: str | None = None
        while True:
            found = await self._all(*values.sqlite_threads_query(after, TYPES_PAGE))
            threads = [str(row[0]) for row in found]
            if not threads:
                return
            rows: list[Any] = []
            for query in values.sqlite_types_queries(threads, all_checkpoints):
                rows += await self._all(query, threads)
            after = threads[-1]
            yield values.sqlite_thread_blobs(threads, rows)

    async def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None:
        checkpoint = await self._all(values.SQLITE_CHECKPOINT_SQL, key)
        writes = await self._all(values.SQLITE_WRITES_SQL, key)
        return values.sqlite_values(checkpoint[0] if checkpoint else None, writes)

    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        rows = await self._all(HEAD_ID_SQL, (thread_id, checkpoint_ns))
        return rows[0][0] if rows else None

    async def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        return _types(await self._all(ROW_TYPES_SQL, _thread(thread_id, checkpoint_ns)))

    async def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """The twin of `SqliteStore.write_on`."""

        async def put() -> None:
            await aput_new(self.saver, new, writes_first=False)

        return await self._claimed(planned, new, put)

    rewinds = True

    async def chain_link(self, key: tuple[str, str, str]) -> Rung | None:
        rows = await self._all(chain_rows.SQLITE_RUNG_SQL, values.key_params(key))
        return chain_rows.rung_from(rows)

    async def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        """The twin of `SqliteStore.write_copy`."""

        async def put() -> None:
            async with self.lock:
                await self.conn.execute(chain_rows.SQLITE_COPY_SQL, copy.params())

        return await self._claimed(planned, copy, put)

    async def _claimed(
        self, planned: Planned, new: Written, put: Callable[[], Awaitable[None]]
    ) -> WriteOutcome:
        with claim(self.saver, thread_key(planned)) as mine:
            if not mine:
                return "claimed"
            return await self._write_claimed(planned, new, put)

    async def _write_claimed(
        self, planned: Planned, new: Written, put: Callable[[], Awaitable[None]]
    ) -> WriteOutcome:
        async with self.writing:
            moved = await self._begin(planned, new)
            if moved is not None:
                return moved
            try:
                await put()
            except BaseException:
                await self._end("ROLLBACK")
                raise
            await self._end("COMMIT")
        siblings = await self._all(SIBLINGS_SQL, sibling_key(planned, new))
        return "superseded" if siblings[0][0] else "repaired"

    async def _all(self, query: str, params: Any) -> list[Any]:
        async with self.lock:
            cursor = await self.conn.execute(query, params)
            return list(await cursor.fetchall())

    async def _begin(self, planned: Planned, new: Written) -> WriteOutcome | None:
        await self.saver.setup()  # type: ignore[attr-defined]
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            moved: WriteOutcome | None = "moved_on"
            try:
                cursor = await self.conn.execute(HEAD_ID_SQL, thread_key(planned))
                row = await cursor.fetchone()
                moved = head_moved(row[0], planned, new)
            finally:
                if moved is not None:
                    await self.conn.execute("ROLLBACK")
            return moved

    async def _end(self, statement: str) -> None:
        async with self.lock:
            if self.conn.in_transaction:
                await self.conn.execute(statement)

    rewrites_writes = True

    async def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        """The twin of `SqliteStore.rewrite_writes`."""
        with claim(self.saver, (plan.thread_id, plan.checkpoint_ns)) as mine:
            if not mine:
                return "claimed"
            async with self.writing, self.lock:
                return await self._in_transaction(lambda: self._rewrite(run_id, plan))

    async def _rewrite(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        cursor = await self.conn.execute(HEAD_ID_SQL, (plan.thread_id, plan.checkpoint_ns))
        head = await cursor.fetchone()
        if head is None or head[0] != plan.checkpoint_id:
            return "moved_on"
        moved = before_rewriting(await self._current(plan.writes), plan)
        if moved is not None:
            return moved
        if sr.drops_answer(plan) and await self._answer_is_new(plan.head):
            return "moved_on"  # a new answer, equal to the old one, stored since the read
        await self.conn.execute(sr.AUDIT_TABLE_SQL)
        await self.conn.executemany(sr.RECORD_REWRITE_SQL, audit_rows(run_id, plan))
        for statement, params in sr.statements(plan.writes):
            await self.conn.executemany(statement, params)
        return "repaired"

    async def answer_is_new(self, key: tuple[str, str, str]) -> bool:
        async with self.lock:
            return await self._answer_is_new(key)

    async def _answer_is_new(self, key: tuple[str, str, str]) -> bool:
        """`sqlite_rewrites.answer_is_new`, inside the caller's transaction."""
        cursor = await self.conn.execute(sr.ANSWER_ORDER_SQL, sr.answer_order_params(key))
        return sr.answer_is_new(await cursor.fetchone())

    async def rewrites_of(self, run_id: str) -> list[WriteRewrite]:
        if not (await self._all(sr.HAS_REWRITES_SQL, ()))[0][0]:
            return []
        return [write_from_row(row) for row in await self._all(sr.REWRITES_OF_SQL, (run_id,))]

    async def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[RestoreOutcome]:
        """The twin of `SqliteStore.restore_writes`."""
        with claim(self.saver, (writes[0].thread_id, writes[0].checkpoint_ns)) as mine:
            if not mine:
                return ["claimed"] * len(writes)
            async with self.writing, self.lock:
                return await self._in_transaction(lambda: self._restore(writes))

    async def _restore(self, writes: Sequence[WriteRewrite]) -> list[RestoreOutcome]:
        outcomes, back = restoring(writes, await self._current(writes))
        for statement, params in sr.statements(back):
            await self.conn.executemany(statement, params)
        return outcomes

    async def _current(self, writes: Sequence[WriteRewrite]) -> list[bytes | None]:
        found: list[bytes | None] = []
        for write in writes:
            cursor = await self.conn.execute(sr.CURRENT_VALUE_SQL, write.key)
            row = await cursor.fetchone()
            found.append(None if row is None else bytes(row[0]))
        return found

    async def _in_transaction(self, work: Callable[[], Awaitable[_Done]]) -> _Done:
        """`work` in one write transaction, committed unless it raises."""
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            done = await work()
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise
        await self.conn.execute("COMMIT")
        return done
