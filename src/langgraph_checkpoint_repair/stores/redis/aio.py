"""The Redis driver's async store: the twin of `sync.RedisStore`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ...decisions.plan import NewCheckpoint
from ..base import Head, Selection, aput_new
from ..generic.store import AsyncGenericStore, NoStoredBytes
from ..opening_errors import TargetError
from ..stored_values import ThreadBlobs
from .base import (
    HEAD_FIELDS,
    NAMESPACES_INDEXED,
    NO_TYPES,
    PAGE,
    distinct_count,
    of_run,
    pointer_pattern,
    unpointed,
    written_keys,
)
from .look import head_of_document, looked, shows_delta, written_heads, written_query
from .saver import AsyncRedisStoreSaver, aevery_match


class AsyncRedisStore(AsyncGenericStore):
    """Async store over an `AsyncRedisStoreSaver`."""

    saver: AsyncRedisStoreSaver

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        self.listing = None
        if selection.threads is None:
            await self._every_namespace_pointed()
        pointers: list[Any] = []
        async for pointer in self._pointers(selection):
            pointers.append(pointer)
            if len(pointers) >= selection.page_size:
                if page := await self._heads(pointers, selection):
                    yield page
                pointers = []
        if pointers and (page := await self._heads(pointers, selection)):
            yield page

    async def _every_namespace_pointed(self) -> None:
        """The twin of `RedisStore._every_namespace_pointed`."""
        redis, prefix = self.saver._redis, self.saver._checkpoint_prefix
        pattern = pointer_pattern(prefix)
        pointers = len([_ async for _ in redis.scan_iter(match=pattern, count=PAGE)])
        indexed = distinct_count(await redis.execute_command(*NAMESPACES_INDEXED))
        refused = unpointed(indexed, pointers)
        if refused is not None:
            raise TargetError(refused)

    async def _pointers(self, selection: Selection) -> AsyncIterator[Any]:
        redis, prefix = self.saver._redis, self.saver._checkpoint_prefix
        threads = [None] if selection.threads is None else selection.threads
        for thread_id in threads:
            pattern = pointer_pattern(prefix, thread_id)
            async for pointer in redis.scan_iter(match=pattern, count=PAGE):
                yield pointer

    async def _heads(self, pointers: list[Any], selection: Selection) -> list[Head]:
        """The twin of `RedisStore._heads`."""
        redis = self.saver._redis
        pipe = redis.pipeline(transaction=False)
        for pointer in pointers:
            pipe.get(pointer)
        keys = [key for key in await pipe.execute() if key]
        return await self._page(keys, selection)

    async def _page(self, keys: list[Any], selection: Selection) -> list[Head]:
        """The twin of `RedisStore._page`."""
        pipe = self.saver._redis.pipeline(transaction=False)
        for key in keys:
            pipe.json().get(key)
        documents = await pipe.execute(raise_on_error=False)
        found = [(self._head_at(k, d), d) for k, d in zip(keys, documents, strict=True)]
        taken = [(h, d) for h, d in found if h is not None and selection.takes(h.thread_id)]
        written = await self._written([head for head, _ in taken])
        heads = [await self._judged(h, d, h.key in written, selection) for h, d in taken]
        return sorted(heads, key=lambda head: head.key)

    def _head_at(self, key: Any, document: Any) -> Head | None:
        return head_of_document(document)

    async def _written(self, heads: list[Head]) -> set[tuple[str, str, str]]:
        """The twin of `RedisStore._written`."""
        if not heads:
            return set()
        index = self.saver.checkpoint_writes_index
        return written_heads(await aevery_match(index, lambda at: written_query(heads, at, PAGE)))

    async def _judged(self, head: Head, document: Any, written: bool, selection: Selection) -> Head:
        head = looked(head, document, written, selection)
        if shows_delta(document):
            head = replace(head, history_lost=await self.lost_history(head, selection))
        return head

    def type_pages(self, all_checkpoints: bool) -> AsyncIterator[ThreadBlobs]:
        raise NoStoredBytes(NO_TYPES)

    async def load(self, head: Head) -> CheckpointTuple | None:
        return await self.saver.aget_tuple(head.config)

    async def write(self, new: NewCheckpoint) -> None:
        """The twin of `RedisStore.write`."""
        await aput_new(self.saver, new, writes_first=False)
        head, written = written_keys(self.saver, new)
        left = await self.saver._redis.pttl(head)
        if left > 0:
            for key in written:
                await self.saver._redis.pexpire(key, left)

    async def _of_run(self, run_id: str) -> AsyncIterator[CheckpointTuple]:
        """The twin of `RedisStore._of_run`."""
        redis = self.saver._redis
        pattern = f"{self.saver._checkpoint_prefix}:*"
        keys: list[Any] = []
        async for key in redis.scan_iter(match=pattern, count=PAGE):
            keys.append(key)
            if len(keys) >= PAGE:
                async for tup in self._named_run(keys, run_id):
                    yield tup
                keys = []
        async for tup in self._named_run(keys, run_id):
            yield tup

    async def _named_run(self, keys: list[Any], run_id: str) -> AsyncIterator[CheckpointTuple]:
        pipe = self.saver._redis.pipeline(transaction=False)
        for key in keys:
            pipe.json().get(key, "$.metadata", *HEAD_FIELDS)
        for fields in await pipe.execute(raise_on_error=False):
            head = of_run(fields, run_id)
            tup = None if head is None else await self.saver.aget_tuple(head.config)
            if tup is not None:
                yield tup
