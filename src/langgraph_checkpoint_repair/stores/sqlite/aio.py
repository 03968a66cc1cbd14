"""The async SQLite store: the twin of `sync`, on an aiosqlite connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
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
from ..base import Head, Selection, aput_new
from ..claims import claim
from ..generic import AsyncGenericStore
from ..stored_values import ThreadBlobs, key_params
from . import base as sql
from . import rewrites as sr
from . import values

_Done = TypeVar("_Done")


class AsyncSqliteStore(AsyncGenericStore):
    """AsyncSqliteSaver: the twin of `SqliteStore`."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        super().__init__(saver)
        self.writing = sql.awriting_lock(saver)
        self.conn: Any = saver.conn  # type: ignore[attr-defined]
        self.lock: asyncio.Lock = saver.lock  # type: ignore[attr-defined]

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        after: tuple[str, str] | None = None
        while True:
            rows = await self._all(*sql.heads_query(after, selection.page_size))
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            lost: dict[tuple[str, str], tuple[tuple[FindingCode, str], ...]] = {}
            for key in sql.delta_heads(rows, selection):
                namespace = await self._all(sql.NAMESPACE_SQL, key)
                lost[key] = sql.seeds_missing(namespace, self.saver.serde, selection.channels)
            yield sql.selected_heads(rows, selection, self.saver.serde, lost)

    async def count_heads(self, selection: Selection) -> int | None:
        return sql.counted(await self._all(sql.THREADS_SQL, ()), selection)

    async def type_pages(self, all_checkpoints: bool) -> AsyncIterator[ThreadBlobs]:
        """The twin of `SqliteStore.type_pages`."""
        after: str | None = None
        while True:
            found = await self._all(*values.threads_query(after, sql.TYPES_PAGE))
            threads = [str(row[0]) for row in found]
            if not threads:
                return
            rows: list[Any] = []
            for query in values.types_queries(threads, all_checkpoints):
                rows += await self._all(query, threads)
            after = threads[-1]
            yield values.thread_blobs(threads, rows)

    async def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None:
        checkpoint = await self._all(values.CHECKPOINT_SQL, key)
        writes = await self._all(values.WRITES_SQL, key)
        return values.stored_values(checkpoint[0] if checkpoint else None, writes)

    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        rows = await self._all(sql.HEAD_ID_SQL, (thread_id, checkpoint_ns))
        return rows[0][0] if rows else None

    async def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        rows = await self._all(sql.ROW_TYPES_SQL, sql.thread_params(thread_id, checkpoint_ns))
        return sql.row_types_of(rows)

    async def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """The twin of `SqliteStore.write_on`."""

        async def put() -> None:
            await aput_new(self.saver, new, writes_first=False)

        return await self._claimed(planned, new, put)

    rewinds = True

    async def chain_link(self, key: tuple[str, str, str]) -> Rung | None:
        rows = await self._all(sql.RUNG_SQL, key_params(key))
        return rung_from(rows)

    async def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        """The twin of `SqliteStore.write_copy`."""

        async def put() -> None:
            async with self.lock:
                await self.conn.execute(sql.COPY_SQL, copy.params())

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
                await self._end(sql.ROLLBACK_SQL)
                raise
            await self._end(sql.COMMIT_SQL)
        siblings = await self._all(sql.SIBLINGS_SQL, sibling_key(planned, new))
        return "superseded" if siblings[0][0] else "repaired"

    async def _all(self, query: str, params: Any) -> list[Any]:
        async with self.lock:
            cursor = await self.conn.execute(query, params)
            return list(await cursor.fetchall())

    async def _begin(self, planned: Planned, new: Written) -> WriteOutcome | None:
        await self.saver.setup()  # type: ignore[attr-defined]
        async with self.lock:
            await self.conn.execute(sql.BEGIN_SQL)
            moved: WriteOutcome | None = "moved_on"
            try:
                cursor = await self.conn.execute(sql.HEAD_ID_SQL, thread_key(planned))
                row = await cursor.fetchone()
                moved = head_moved(row[0], planned, new)
            finally:
                if moved is not None:
                    await self.conn.execute(sql.ROLLBACK_SQL)
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
        cursor = await self.conn.execute(sql.HEAD_ID_SQL, (plan.thread_id, plan.checkpoint_ns))
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
        """`rewrites.answer_is_new`, inside the caller's transaction."""
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
        await self.conn.execute(sql.BEGIN_SQL)
        try:
            done = await work()
        except BaseException:
            await self.conn.execute(sql.ROLLBACK_SQL)
            raise
        await self.conn.execute(sql.COMMIT_SQL)
        return done
