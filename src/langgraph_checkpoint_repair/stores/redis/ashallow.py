"""The Redis driver's async store over the shallow savers' layout: the twin of
`shallow.ShallowRedisStore`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ...decisions.plan import NewCheckpoint
from ...decisions.races import Planned, WriteOutcome, head_moved, thread_key
from ..base import Head, Selection
from ..claims import claim
from ..opening_errors import TargetError
from .aio import AsyncRedisStore
from .base import (
    DOCUMENTS_INDEXED,
    NAMESPACES_INDEXED,
    PAGE,
    distinct_count,
    document_pattern,
    not_shallow,
    search_total,
    shallow_head,
)
from .look import looked, lost_in_document, shows_delta
from .replacing import put_back_steps, replace_steps
from .running import AsyncStepRunner
from .shallow import written_keys
from .shallow_saver import AsyncShallowRedisStoreSaver, arecorded_put


class AsyncShallowRedisStore(AsyncRedisStore):
    """Async store over an `AsyncShallowRedisStoreSaver`."""

    saver: AsyncShallowRedisStoreSaver  # type: ignore[assignment]
    replaces_heads = True

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        self.listing = None
        if selection.threads is None:
            await self._one_document_each()
        keys: list[Any] = []
        async for key in self._documents(selection):
            keys.append(key)
            if len(keys) >= selection.page_size:
                if page := await self._page(keys, selection):
                    yield page
                keys = []
        if keys and (page := await self._page(keys, selection)):
            yield page

    async def _documents(self, selection: Selection) -> AsyncIterator[Any]:
        redis, prefix = self.saver._redis, self.saver._checkpoint_prefix
        threads = [None] if selection.threads is None else selection.threads
        for thread_id in threads:
            async for key in redis.scan_iter(match=document_pattern(prefix, thread_id), count=PAGE):
                yield key

    async def _one_document_each(self) -> None:
        """The twin of `ShallowRedisStore._one_document_each`."""
        redis: Any = self.saver._redis
        pairs = distinct_count(await redis.execute_command(*NAMESPACES_INDEXED))
        refused = not_shallow(search_total(await redis.execute_command(*DOCUMENTS_INDEXED)), pairs)
        if refused is not None:
            raise TargetError(refused)

    def _head_at(self, key: Any, document: Any) -> Head | None:
        return shallow_head(self.saver, key, super()._head_at(key, document))

    async def _judged(self, head: Head, document: Any, written: bool, selection: Selection) -> Head:
        head = looked(head, document, written, selection)
        if shows_delta(document):
            head = replace(head, history_lost=lost_in_document(document, selection.channels))
        return head

    async def load(self, head: Head) -> CheckpointTuple | None:
        tup = await self.saver.aget_tuple(head.config)
        if tup is None or tup.config["configurable"]["checkpoint_id"] != head.checkpoint_id:
            return None
        return tup

    async def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """The twin of `ShallowRedisStore.write_on`."""
        with claim(self.saver, thread_key(planned)) as mine:
            if not mine:
                return "claimed"
            moved = head_moved(await self.head_id(*thread_key(planned)), planned, new)
            if moved is not None:
                return moved
            key, document = await arecorded_put(self.saver, new)
            where = (planned.thread_id, planned.checkpoint_ns, planned.checkpoint_id)
            outcome, left = await AsyncStepRunner(self.saver).driven(
                replace_steps(run_id, where, key, document)
            )
            if outcome == "repaired":
                for task_id, writes in new.task_writes():
                    await self.saver.aput_writes(new.written_config, writes, task_id)
                if left > 0:
                    for written in written_keys(self.saver, new):
                        await self.saver._redis.pexpire(written, left)
            return outcome

    async def put_back(self, undo_of: str, where: tuple[str, str, str]) -> WriteOutcome:
        key = self.saver._make_shallow_redis_checkpoint_key(where[0], where[1])
        return await AsyncStepRunner(self.saver).driven(put_back_steps(undo_of, where, key))
