"""The async Redis pruner: the twin of `prune.RedisPruner`, on an AsyncRedisSaver's
server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ...retention.keep import StoredCheckpoint
from ...retention.outcome import Deleted, ThreadPruned
from ...retention.rules import PruneRules
from ..pruners import CannotPrune
from . import archive
from . import prune_base as pb
from . import steps as st
from .base import PAGE
from .prune import RETRIES
from .prune_base import now, root_pointers, thread_of
from .running import AsyncStepRunner


class AsyncRedisPruner:
    """Prunes, restores and forgets on an AsyncRedisSaver's server."""

    forget_needs = None
    vacuums = False
    not_compacted = pb.NOT_COMPACTED

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.steps = AsyncStepRunner(saver)

    def layout(self) -> pb.Layout:
        """RedisSaver's layout, its pointers named by the saver."""
        return pb.full_layout(self.saver._make_redis_checkpoint_latest_key)

    async def ready(
        self, *, archive: bool, writes: bool, recorded: bool = True, compact: bool = False
    ) -> None:
        """Nothing to make: the archive's keys are written with the first prune."""

    async def thread_pages(self, threads: Sequence[str] | None) -> AsyncIterator[list[str]]:
        if threads is not None:
            for start in range(0, len(threads), PAGE):
                yield await self._present(threads[start : start + PAGE])
            return
        page: set[str] = set()
        async for pointer in self.steps.redis.scan_iter(
            match=root_pointers(self.saver), count=PAGE
        ):
            page.add(thread_of(self.saver, pointer))
            if len(page) >= PAGE:
                yield sorted(page)
                page = set()
        if page:
            yield sorted(page)

    async def _present(self, threads: Sequence[str]) -> list[str]:
        pointers = [self.saver._make_redis_checkpoint_latest_key(t, "") for t in threads]
        there = await self.steps.driven(st.read_replies([("exists", key) for key in pointers]))
        return [thread for thread, found in zip(threads, there, strict=True) if found]

    async def begin_run(
        self, run_id: str, arguments: dict[str, Any], command: str = "prune"
    ) -> None:
        record = {"arguments": json.dumps({**arguments, "command": command})}
        await self.steps.driven(archive.run_record(run_id, {**record, "started_at": now()}))

    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        record = {"summary": json.dumps(summary), "finished_at": now()}
        await self.steps.driven(archive.run_record(run_id, record))

    async def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        return await self.steps.driven(pb.prune_steps(run_id, thread_id, rules, self.layout()))

    async def thread_rows(self, thread_id: str) -> list[StoredCheckpoint] | None:
        return await self.steps.driven(pb.skeleton_steps(thread_id, self.layout()))

    async def run_threads(self, runs: Sequence[str], threads: Sequence[str] | None) -> list[str]:
        raise CannotPrune(pb.NO_ROLLBACK)

    async def pruned_threads(self, run_id: str) -> list[str] | None:
        return await self.steps.driven(archive.run_threads_steps(run_id))

    async def restore_needs(self, run_id: str) -> None:
        """Redis has no roles here: nothing to check."""

    async def ready_to_restore(self, needs: object) -> None:
        """Nothing to make."""

    async def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        for _ in range(RETRIES):
            restored = await self.steps.driven(archive.restore_steps(run_id, thread_id))
            if restored is not None:
                return restored
        raise RuntimeError(f"thread {thread_id!r} kept changing while its undo ran: run it again")

    async def forget(self, run_id: str) -> int:
        return await self.steps.driven(archive.forget_steps(run_id))
