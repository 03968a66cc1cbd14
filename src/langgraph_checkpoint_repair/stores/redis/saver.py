"""The savers a `redis://` TARGET opens: langgraph-checkpoint-redis's own, loading every
pending write of a checkpoint.

The stock savers skip a checkpoint's writes when its `has_writes` flag is false (which
RedisSaver stores on checkpoints whose writes exist) or when the key registry has no
entry (a RedisSaver that never ran `setup()` registers none). LangGraph's rebuild of
a delta channel then loses messages, and a repair could answer a tool call that has
its result. These subclasses read the writes through the writes' search index
instead; everything else, the format they write included, is the stock saver's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import PendingWrite
from langgraph.checkpoint.redis import RedisSaver
from langgraph.checkpoint.redis.aio import AsyncRedisSaver

from .base import decoded_writes, writes_query


def every_match(index: Any, query_at: Callable[[int], Any]) -> list[Any]:
    """Every document a search of `index` matches, one page (`query_at(offset)`) at a time."""
    docs: list[Any] = []
    while True:
        found = index.search(query_at(len(docs)))
        docs.extend(found.docs)
        if not found.docs or len(docs) >= found.total:
            return docs


async def aevery_match(index: Any, query_at: Callable[[int], Any]) -> list[Any]:
    """The twin of `every_match`, over an async index."""
    docs: list[Any] = []
    while True:
        found = await index.search(query_at(len(docs)))
        docs.extend(found.docs)
        if not found.docs or len(docs) >= found.total:
            return docs


def indexed_writes(saver: Any, thread_id: str, ns: str, checkpoint_id: str) -> list[PendingWrite]:
    """Every pending write of one checkpoint, through the writes' search index."""
    index = saver.checkpoint_writes_index
    docs = every_match(index, lambda at: writes_query(thread_id, ns, checkpoint_id, at))
    return decoded_writes(saver.serde, docs)


async def aindexed_writes(
    saver: Any, thread_id: str, ns: str, checkpoint_id: str
) -> list[PendingWrite]:
    """The twin of `indexed_writes`, over an async saver's index."""
    index = saver.checkpoint_writes_index
    docs = await aevery_match(index, lambda at: writes_query(thread_id, ns, checkpoint_id, at))
    return decoded_writes(saver.serde, docs)


class RedisStoreSaver(RedisSaver):
    """RedisSaver, loading every write of each checkpoint it loads."""

    def _load_pending_writes_with_registry_check(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, *_: Any, **__: Any
    ) -> list[PendingWrite]:
        return indexed_writes(self, thread_id, checkpoint_ns, checkpoint_id)


class AsyncRedisStoreSaver(AsyncRedisSaver):
    """AsyncRedisSaver, loading every write of each checkpoint it loads."""

    async def _aload_pending_writes(
        self, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str = ""
    ) -> list[PendingWrite]:
        return await aindexed_writes(self, thread_id, checkpoint_ns, checkpoint_id)
