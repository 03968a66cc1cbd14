"""The async SQLite pruner, on an AsyncSqliteSaver's aiosqlite connection: the twin of
`prune`, running the same steps."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
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


class AsyncSqlitePruner:
    """Prunes, restores and forgets on an AsyncSqliteSaver's file."""

    forget_needs = None
    vacuums = True

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self.conn: Any = saver.conn  # type: ignore[attr-defined]
        self.lock: Any = saver.lock  # type: ignore[attr-defined]
        self.writing = sql.awriting_lock(saver)
        self.columns: dict[str, list[str]] = {}

    async def _fetch(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        cursor = await self.conn.execute(query, params)
        return list(await cursor.fetchall())

    async def ready(
        self, *, archive: bool, writes: bool, recorded: bool = True, compact: bool = False
    ) -> None:
        async with self.lock:
            self.columns = {table: await self._columns(table) for table in ps.TABLES}
            if writes and (archive or recorded):
                for statement in ps.archive_ddl(self.columns):
                    await self.conn.execute(statement)
                await self.conn.commit()

    async def _columns(self, table: str) -> list[str]:
        return [str(row[1]) for row in await self._fetch(f"PRAGMA table_info({table})")]

    async def thread_pages(self, threads: Sequence[str] | None) -> AsyncIterator[list[str]]:
        after = ""
        while True:
            async with self.lock:
                found = [str(r[0]) for r in await self._fetch(ps.THREADS_SQL, (after, PAGE_SIZE))]
            if not found:
                return
            yield ps.selected(found, threads)
            after = found[-1]

    async def begin_run(
        self, run_id: str, arguments: dict[str, Any], command: str = "prune"
    ) -> None:
        recorded = json.dumps({**arguments, "command": command})
        await self._commit(ps.BEGIN_RUN_SQL, (run_id, recorded))

    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        await self._commit(ps.FINISH_RUN_SQL, (json.dumps(summary), run_id))

    async def _commit(self, query: str, params: Sequence[Any]) -> None:
        async with self.writing, self.lock:
            await self.conn.execute(query, params)
            await self.conn.commit()

    async def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        steps = ps.prune_steps(run_id, thread_id, rules, self.columns, self.saver.serde)
        return await self._in_transaction(steps, "BEGIN" if rules.dry_run else sql.BEGIN_SQL)

    async def run_threads(self, runs: Sequence[str], threads: Sequence[str] | None) -> list[str]:
        """The threads holding a checkpoint of `runs` (of `threads`, when given)."""
        found = await self._run_threads(json.dumps(list(runs)))
        return ps.selected(found, threads)

    async def _run_threads(self, runs: str) -> list[str]:
        async with self.lock:
            return [str(row[0]) for row in await self._fetch(rb.RUN_THREADS_SQL, (runs,))]

    async def rollback_thread(
        self, record: str, thread_id: str, runs: frozenset[str], rules: PruneRules
    ) -> ThreadPruned:
        """`runs` taken out of one thread, in one write transaction, archived under
        `record`."""
        steps = rb.rollback_steps(record, thread_id, runs, self.columns, rules, self.saver.serde)
        return await self._in_transaction(steps, "BEGIN" if rules.dry_run else sql.BEGIN_SQL)

    async def thread_rows(self, thread_id: str) -> list[StoredCheckpoint] | None:
        steps = ps.skeleton_steps(thread_id, self.saver.serde)
        return await self._in_transaction(steps, "BEGIN")

    async def repoint(self, run_id: str, thread_id: str, found: Compaction, archive: bool) -> bool:
        return await self._in_transaction(ps.repoint_steps(run_id, thread_id, found, archive))

    async def revert(self, run_id: str, thread_id: str, found: Compaction) -> None:
        await self._in_transaction(ps.revert_steps(run_id, thread_id, found))

    async def pruned_threads(self, run_id: str) -> list[str] | None:
        async with self.lock:
            if not await self._fetch(ps.HAS_TABLE_SQL, (ps.RUNS,)):
                return None
            if not await self._fetch(ps.IS_RUN_SQL, (run_id,)):
                return None
            self.columns = {table: await self._columns(table) for table in ps.TABLES}
            found = await self._fetch(ps.ARCHIVED_THREADS_SQL, (run_id,) * len(ps.ARCHIVES))
            return [str(row[0]) for row in found]

    async def restore_needs(self, run_id: str) -> None:
        """SQLite has no roles: nothing to check."""

    async def ready_to_restore(self, needs: object) -> None:
        """SQLite has no roles; an archive an earlier release made gets its indexes."""
        async with self.writing, self.lock:
            for statement in ps.ARCHIVE_INDEX_DDL:
                await self.conn.execute(statement)
            await self.conn.commit()

    async def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        return await self._in_transaction(ps.restore_steps(run_id, thread_id, self.columns))

    async def copy_thread(self, source: str, target: str) -> int:
        """The twin of `SqlitePruner.copy_thread`."""
        async with self.lock:
            columns = {table: await self._columns(table) for table in cs.COPY.tables}
        return await self._in_transaction(copy_steps(source, target, columns, cs.COPY))

    async def forget(self, run_id: str) -> int:
        return await self._in_transaction(ps.forget_steps(run_id))

    async def vacuum(self) -> None:
        async with self.writing, self.lock:
            await self.conn.execute("VACUUM")

    async def _in_transaction(self, steps: ps.Steps[T], begin: str = sql.BEGIN_SQL) -> T:
        async with self.writing, self.lock:
            await self.conn.execute(begin)
            try:
                done = await self._drive(steps)
            except BaseException:
                await self.conn.execute(sql.ROLLBACK_SQL)
                raise
            await self.conn.execute(sql.COMMIT_SQL)
            return done

    async def _drive(self, steps: ps.Steps[T]) -> T:
        """The twin of `prune.drive`."""
        try:
            statement = next(steps)
            while True:
                statement = steps.send(await self._fetch(*statement))
        except StopIteration as done:
            result: T = done.value
            return result
