"""The async PostgreSQL pruner: the twin of `prune`, running the same steps."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg import AsyncConnection
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
from .aio import AsyncPostgresStore

T = TypeVar("T")


class AsyncPostgresPruner:
    """Prunes, restores and forgets on an AsyncPostgresSaver's tables."""

    forget_needs = privileges.FORGET_NEEDS
    vacuums = False
    """Its file is given back by VACUUM FULL, which locks each table: left to the operator."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.store = AsyncPostgresStore(saver)
        self.columns: dict[str, list[str]] = {}

    async def _rows(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        return await self.store._rows(query, params)

    async def ready(
        self, *, archive: bool, writes: bool, recorded: bool = True, compact: bool = False
    ) -> None:
        if writes and recorded:
            await self._rows(sql.PROBE_SQL)
            step = await self.store._audit_step()
            if step == "migrate":
                await self.store.migrate()
            elif step is not None:
                raise StoreNotReady(step)
        if writes:
            await self._check(
                privileges.prune_needs(archive=archive, recorded=recorded, compact=compact)
            )
        self.columns, lacking = await self._table_columns()
        if archive and writes and lacking:
            raise StoreNotReady(ps.archive_lacks(lacking))

    async def _table_columns(self) -> tuple[dict[str, list[str]], list[str]]:
        """The twin of `PostgresPruner._table_columns`."""
        return ps.missing_columns(await self._rows(ps.COLUMNS_SQL, (ps.COLUMN_TABLES,)))

    async def _check(self, needs: privileges.Needs) -> None:
        problem = privileges.problem(await self._rows(*privileges.check_query(needs)))
        if problem is not None:
            raise StoreNotReady(problem)

    async def thread_pages(self, threads: Sequence[str] | None) -> AsyncIterator[list[str]]:
        after = ""
        while found := await self._rows(ps.THREADS_SQL, (after, threads, threads, PAGE_SIZE)):
            yield [str(row[0]) for row in found]
            after = str(found[-1][0])

    async def begin_run(
        self, run_id: str, arguments: dict[str, Any], command: str = "prune"
    ) -> None:
        await self.store.begin_run(run_id, command, arguments)

    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        await self.store.finish_run(run_id, summary)

    async def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        steps = ps.prune_steps(run_id, thread_id, rules, self.columns)
        return await self._on_snapshot(thread_id, steps)

    async def run_threads(self, runs: Sequence[str], threads: Sequence[str] | None) -> list[str]:
        """The twin of `PostgresPruner.run_threads`."""
        found = await self._rows(rb.RUN_THREADS_SQL, (list(runs), threads, threads))
        return [str(row[0]) for row in found]

    async def rollback_thread(
        self, record: str, thread_id: str, runs: frozenset[str], rules: PruneRules
    ) -> ThreadPruned:
        steps = rb.rollback_steps(record, thread_id, runs, self.columns, rules)
        return await self._on_snapshot(thread_id, steps)

    async def _on_snapshot(self, thread_id: str, steps: ps.Steps[ThreadPruned]) -> ThreadPruned:
        async with self.store._connection() as conn:
            try:
                async with _snapshot(conn):
                    return await adrive(conn, steps)
            except psycopg.errors.SerializationFailure:
                return ThreadPruned(thread_id, skipped="changed")

    async def thread_rows(self, thread_id: str) -> list[StoredCheckpoint]:
        async with self.store._connection() as conn:
            return await adrive(conn, ps.skeleton_steps(thread_id))

    async def repoint(self, run_id: str, thread_id: str, found: Compaction, archive: bool) -> bool:
        async with self.store._connection() as conn, conn.transaction():
            return await adrive(conn, ps.repoint_steps(run_id, thread_id, found, archive))

    async def revert(self, run_id: str, thread_id: str, found: Compaction) -> None:
        async with self.store._connection() as conn, conn.transaction():
            await adrive(conn, ps.revert_steps(run_id, thread_id, found))

    async def pruned_threads(self, run_id: str) -> list[str] | None:
        if not (await self._rows(sql.RUN_EXISTS_SQL))[0][0]:
            return None
        if not await self._rows(rs.IS_PRUNE_SQL, (run_id,)):
            return None
        return [str(row[0]) for row in await self._rows(rs.ARCHIVED_THREADS_SQL, (run_id,) * 4)]

    async def restore_needs(self, run_id: str) -> privileges.Needs:
        if await self._rows(rs.COMPACTED_SQL, (run_id,)):
            return privileges.COMPACTED_RESTORE_NEEDS
        return privileges.RESTORE_NEEDS

    async def ready_to_restore(self, needs: privileges.Needs) -> None:
        await self._check(needs)
        self.columns, _ = await self._table_columns()

    async def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        async with self.store._connection() as conn, conn.transaction():
            return await adrive(conn, rs.restore_steps(run_id, thread_id, self.columns))

    async def forget(self, run_id: str) -> int:
        async with self.store._connection() as conn, conn.transaction():
            return await adrive(conn, rs.forget_steps(run_id))

    async def copy_thread(self, source: str, target: str) -> int:
        """The twin of `PostgresPruner.copy_thread`."""
        columns, _ = await self._table_columns()
        async with self.store._connection() as conn, _snapshot(conn):
            return await adrive(conn, copy_steps(source, target, columns, cs.COPY))


async def adrive(conn: AsyncConnection[Any], steps: ps.Steps[T]) -> T:
    """The twin of `prune.drive`."""
    async with conn.cursor(row_factory=tuple_row) as cursor:
        try:
            statement = next(steps)
            while True:
                await cursor.execute(*statement)
                statement = steps.send(await cursor.fetchall() if cursor.description else [])
        except StopIteration as done:
            result: T = done.value
            return result


@contextlib.asynccontextmanager
async def _snapshot(conn: AsyncConnection[Any]) -> AsyncIterator[None]:
    await conn.execute(ps.SNAPSHOT_SQL)
    try:
        yield
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")
