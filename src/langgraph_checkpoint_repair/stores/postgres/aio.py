"""The async PostgreSQL store: the twin of `sync`, thin I/O over `base`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict
from typing import Any

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from ...decisions.plan import Assessment, NewCheckpoint
from ...decisions.races import Planned, WriteOutcome, Written, head_left, sibling_key, thread_key
from ...decisions.rewind import RowCopy, Rung, rung_from
from ...decisions.rewrites import (
    InPlaceChanges,
    RestoreOutcome,
    RewritePlan,
    WriteRewrite,
    audit_rows,
    before_rewriting,
    restoring,
    write_from_row,
)
from ...decoding.integrity import StoredValue
from ...redact import scrubbed
from ..base import PAGE_SIZE, Head, RepairEntry, Selection, StoreNotReady, aput_new
from ..first_look import page
from ..first_look.helper import LookHelper
from ..generic import AsyncGenericStore
from ..stored_values import ThreadBlobs, key_params, thread_blobs, values_from_rows
from . import base as sql
from . import privileges, shards, values
from . import rewrite_sql as rw


class AsyncPostgresStore(AsyncGenericStore):
    """AsyncPostgresSaver: paged SQL over heads, a first look at blobs, audit tables."""

    look_helper = True
    """Whether a helper process takes most of each page's first look (`first_look.helper`)."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        super().__init__(saver)
        self.ranges: dict[tuple[int, int], shards.ThreadRange] = {}
        """Each shard's range, sampled once: the page reads and the count agree."""
        self.schema: str | None = None
        """The schema of the tables, read with the first claim (`base.SCHEMA_SQL`)."""

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        conn = self.saver.conn  # type: ignore[attr-defined]
        if isinstance(conn, AsyncConnectionPool):
            async with conn.connection() as pooled:
                yield pooled
        else:
            async with self.saver.lock:  # type: ignore[attr-defined]
                yield conn

    async def _rows(
        self, query: str, params: Any = None, binary: bool = False
    ) -> list[tuple[Any, ...]]:
        """`binary` for the bulk reads: blobs come as they are stored, not hex-encoded."""
        async with (
            self._connection() as conn,
            conn.cursor(row_factory=tuple_row, binary=binary) as cursor,
        ):
            await cursor.execute(query, params)
            return await cursor.fetchall()

    async def _write(self, query: str, params: Any) -> None:
        async with self._connection() as conn, conn.transaction():
            await conn.execute(sql.GENTLE_SQL)
            await conn.execute(query, params)

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        """Each page of heads with its verdicts. The next page's rows are read (a task)
        while this page is decoded and its heads looked at, so the store's time hides
        behind ours; at most two pages are held at once. The end is only taken from a
        read made after the last page was looked at, so a store lost or locked
        meanwhile is still found there."""
        within = await self._within(selection)
        async with contextlib.aclosing(self._pages_within(selection, within)) as pages:
            async for page in pages:  # closed at once when the run stops early
                yield page
        if within is None:
            return
        for more in shards.widened(within, await self._sampled(selection)):  # gained meanwhile
            async with contextlib.aclosing(self._pages_within(selection, more)) as pages:
                async for page in pages:
                    yield page

    async def _pages_within(
        self, selection: Selection, within: shards.ThreadRange | None
    ) -> AsyncGenerator[list[Head], None]:
        with LookHelper(self.look_helper and page.plain_look(self.saver.serde)) as helper:
            read = await self._read_page(selection, shards.first_cursor(within), helper, within)
            while read is not None:
                after = read.after
                ahead = asyncio.ensure_future(self._read_page(selection, after, helper, within))
                try:
                    yield page.judge_page(read, self.saver.serde)
                except BaseException:  # a run stopped early: the read under way ends as it
                    with contextlib.suppress(BaseException):  # would (no cancel mid-query
                        await ahead  # on a shared connection), its outcome taken
                    raise
                del read  # let the page's rows go before the next is taken
                read = await ahead or await self._read_page(selection, after, helper, within)

    async def _read_page(
        self,
        selection: Selection,
        after: tuple[str, str] | None,
        helper: LookHelper,
        within: shards.ThreadRange | None,
    ) -> page.PageRows | None:
        """The rows of the heads after `after` and of their delta walks; None past the end.
        The helper starts on the page's blobs once they are read. A walk's failure is
        kept for `judge_page`, which reads those heads one by one."""
        found = await self._rows(*sql.heads_query(selection, after, within), binary=True)
        rows, others = sql.split_rows(found)
        if not rows:
            return None
        read = page.PageRows(rows, budget=selection.token_budget, lost=sql.blobs_missing(found))
        if selection.graph_channels is not None:
            read.drifting = page.drift_suspects(found)
        for channel, keys in page.walks_needed(rows).items():
            try:
                walked = await self._rows(
                    *sql.delta_walk_query(channel, keys, getattr(self.saver, "js_only", False)),
                    binary=True,
                )
            except psycopg.Error as error:
                read.walks[channel] = error
            else:
                read.walks[channel] = page.gather_walks(keys, walked, self.saver.serde)
        read.read_others(others, self.saver.serde, selection)
        read.start_judging(self.saver.serde, helper.start_judging)
        return read

    async def _within(self, selection: Selection) -> shards.ThreadRange | None:
        """The shard's range of thread ids (`shards`), sampled once per store and shard."""
        if selection.shard is None or selection.shard[1] == 1:
            return None
        if selection.shard not in self.ranges:
            self.ranges[selection.shard] = await self._sampled(selection)
            shards.announce(selection.shard, self.ranges[selection.shard])
        return self.ranges[selection.shard]

    async def _sampled(self, selection: Selection) -> shards.ThreadRange:
        """The shard's range as the store's sample cuts it now."""
        assert selection.shard is not None
        return shards.range_of(await self._rows(shards.SAMPLE_SQL), selection.shard)

    async def count_heads(self, selection: Selection) -> int | None:
        rows = await self._rows(*sql.count_query(selection, await self._within(selection)))
        return int(rows[0][0])

    nul_matters = True
    rewrites_writes = True
    lists_waiting = True

    async def type_pages(self, all_checkpoints: bool) -> AsyncIterator[ThreadBlobs]:
        """The twin of `PostgresStore.type_pages`: the next page is read meanwhile."""
        rows = await self._type_rows(None, all_checkpoints)
        while rows:
            after = (rows[-1][0], rows[-1][1])
            ahead = asyncio.ensure_future(self._type_rows(after, all_checkpoints))
            try:
                yield thread_blobs(rows)
            finally:
                rows = await ahead

    async def _type_rows(self, after: tuple[str, str] | None, all_checkpoints: bool) -> list[Any]:
        query = values.types_query(after, all_checkpoints, PAGE_SIZE)
        return await self._rows(*query, binary=True)

    async def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None:
        rows = await self._rows(values.VALUES_SQL, key_params(key), binary=True)
        return values_from_rows(rows)

    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        rows = await self._rows(sql.HEAD_ID_SQL, (thread_id, checkpoint_ns))
        return rows[0][0] if rows else None

    async def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        params = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        return frozenset(row[0] for row in await self._rows(sql.ROW_TYPES_SQL, params))

    async def migrate(self) -> list[str]:
        """The twin of `PostgresStore.migrate`."""
        if await self._audit_step() is None:
            return []
        applied: list[str] = []
        async with self._connection() as conn, conn.transaction():
            await conn.execute(sql.LOCK_SQL)
            await conn.execute(sql.VERSION_TABLE_SQL)
            async with conn.cursor(row_factory=tuple_row) as cursor:
                await cursor.execute(sql.APPLIED_SQL)
                done = {row[0] for row in await cursor.fetchall()}
            for version, name, statements in sql.migrations():
                if version not in done:
                    await conn.execute(statements, prepare=False)  # several statements
                    await conn.execute(sql.RECORD_MIGRATION_SQL, (version, name))
                    applied.append(name)
        return applied

    async def _audit_step(self) -> str | None:
        state = (await self._rows(privileges.AUDIT_STATE_SQL))[0]
        applied = {row[0] for row in await self._rows(sql.APPLIED_SQL)} if state[1] else None
        return privileges.audit_step(state, applied, sql.known_versions())

    async def ready_to_write(self, changes: InPlaceChanges) -> None:
        """The twin of `PostgresStore.ready_to_write`."""
        await self._rows(sql.PROBE_SQL)
        step = await self._audit_step()
        if step == "migrate":
            await self.migrate()
        elif step is not None:
            raise StoreNotReady(step)
        needs = privileges.check_query(privileges.write_needs(**asdict(changes)))
        problem = privileges.problem(await self._rows(*needs))
        if problem is not None:
            raise StoreNotReady(problem)

    async def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None:
        await self._write(sql.BEGIN_RUN_SQL, (run_id, command, json.dumps(scrubbed(arguments))))

    async def write_repair(
        self, run_id: str, assessment: Assessment, new: NewCheckpoint
    ) -> WriteOutcome:
        """The twin of `PostgresStore.write_repair`."""
        audit_row = sql.repair_row(run_id, assessment, new)
        return await self._write_claimed(assessment, new, audit_row, self._putting(new))

    async def write_undo(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        return await self._write_claimed(planned, new, None, self._putting(new))

    rewinds = True

    async def chain_link(self, key: tuple[str, str, str]) -> Rung | None:
        rows = await self._rows(sql.RUNG_SQL, key_params(key))
        return rung_from(rows)

    async def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        """The twin of `PostgresStore.write_copy`."""

        async def put(conn: AsyncConnection[Any]) -> None:
            await conn.execute(sql.COPY_SQL, copy.params())

        return await self._write_claimed(planned, copy, None, put)

    def _putting(self, new: NewCheckpoint) -> Callable[[AsyncConnection[Any]], Awaitable[None]]:
        async def put(conn: AsyncConnection[Any]) -> None:
            saver = AsyncPostgresSaver(conn, serde=self.saver.serde)
            await aput_new(saver, new)

        return put

    async def _write_claimed(
        self,
        planned: Planned,
        new: Written,
        audit_row: tuple[Any, ...] | None,
        put: Callable[[AsyncConnection[Any]], Awaitable[None]],
    ) -> WriteOutcome:
        async with self._connection() as conn, conn.transaction():
            await conn.execute(sql.GENTLE_SQL)
            moved = await self._claim(conn, planned, new.checkpoint_id)
            if moved is not None:
                return moved
            if audit_row is not None:
                await conn.execute(sql.RECORD_REPAIR_SQL, audit_row)
            await put(conn)  # inside the transaction
        siblings = await self._rows(sql.SIBLINGS_SQL, sibling_key(planned, new))
        return "superseded" if siblings[0][0] else "repaired"

    async def _claim(
        self, conn: AsyncConnection[Any], planned: Planned, repair_id: str | None
    ) -> WriteOutcome | None:
        if not await self._lock(conn, planned):
            return "claimed"
        async with conn.cursor(row_factory=tuple_row) as cursor:
            await cursor.execute(sql.HEAD_ID_SQL, thread_key(planned))
            head = await cursor.fetchone()
        return head_left(None if head is None else head[0], planned, repair_id)

    async def _lock(self, conn: AsyncConnection[Any], planned: Planned) -> bool:
        async with conn.cursor(row_factory=tuple_row) as cursor:
            if self.schema is None:
                await cursor.execute(sql.SCHEMA_SQL)
                self.schema = str((await cursor.fetchone())[0])  # type: ignore[index]
            await cursor.execute(sql.CLAIM_SQL, sql.claim_key(*thread_key(planned), self.schema))
            taken = await cursor.fetchone()
        return bool(taken and taken[0])

    async def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        """The twin of `PostgresStore.rewrite_writes`."""
        try:
            async with self._connection() as conn, conn.transaction():
                await conn.execute(sql.GENTLE_SQL)
                moved = await self._claim(conn, plan, None)
                if moved is None:
                    current = await self._current_blobs(conn, plan.writes)
                    moved = before_rewriting(current, plan)
                if moved is not None:
                    return moved
                await conn.execute(sql.RECORD_REPAIR_SQL, rw.audit_row(run_id, plan))
                async with conn.cursor() as cursor:
                    await cursor.executemany(rw.RECORD_REWRITE_SQL, audit_rows(run_id, plan))
                    for statement, params in rw.statements(plan.writes):
                        await cursor.executemany(statement, params)
                        rw.check_changed(cursor.rowcount, params)
        except rw.WritesChanged:
            return "moved_on"  # an application wrote one since the look
        return "repaired"

    async def _current_blobs(
        self, conn: AsyncConnection[Any], writes: Sequence[WriteRewrite]
    ) -> list[bytes | None]:
        blobs: list[bytes | None] = []
        async with conn.cursor(row_factory=tuple_row, binary=True) as cursor:
            for write in writes:
                await cursor.execute(rw.CURRENT_BLOB_SQL, write.key)
                row = await cursor.fetchone()
                blobs.append(None if row is None else bytes(row[0]))
        return blobs

    async def rewrites_of(self, run_id: str) -> list[WriteRewrite]:
        if not (await self._rows(rw.HAS_REWRITES_SQL))[0][0]:
            return []
        rows = await self._rows(rw.REWRITES_OF_SQL, (run_id,), binary=True)
        return [write_from_row(row) for row in rows]

    async def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[RestoreOutcome]:
        """The twin of `PostgresStore.restore_writes`."""
        try:
            async with self._connection() as conn, conn.transaction():
                await conn.execute(sql.GENTLE_SQL)
                if not await self._lock(conn, writes[0]):
                    return ["claimed"] * len(writes)
                current = await self._current_blobs(conn, writes)
                outcomes, back = restoring(writes, current)
                async with conn.cursor() as cursor:
                    for statement, params in rw.statements(back):
                        await cursor.executemany(statement, params)
                        rw.check_changed(cursor.rowcount, params)
        except rw.WritesChanged:
            return ["moved_on"] * len(writes)  # an application wrote one since the look
        return outcomes

    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        await self._write(sql.FINISH_RUN_SQL, (json.dumps(scrubbed(summary)), run_id))

    async def repairs_of(self, run_id: str) -> AsyncIterator[RepairEntry]:
        has_audit = bool((await self._rows(sql.RUN_EXISTS_SQL))[0][0])
        audited = await self._rows(sql.REPAIRS_OF_SQL, (run_id,)) if has_audit else []
        if not audited:
            async for entry in super().repairs_of(run_id):
                yield entry
        for row in audited:
            if not sql.rewrote_in_place(row):  # `rewrites_of` restores those
                yield sql.entry_from_row(row)
