"""The savers a `redis://` TARGET opens on a store of langgraph-checkpoint-redis's shallow
savers, which keep one document per (thread, namespace), replaced at every step.

The stock shallow savers load, as the head's pending writes, every write their registry
holds, and it holds the writes of every earlier step too (an `__error__` among them):
these subclasses load only the writes of the head's own checkpoint, through the writes'
search index. `recorded_put` lends the saver's own `put` to a repair that must replace
the document atomically: it records the document `put` would store, and sends nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.base import PendingWrite
from langgraph.checkpoint.redis.ashallow import AsyncShallowRedisSaver
from langgraph.checkpoint.redis.shallow import ShallowRedisSaver

from ...decisions.plan import NewCheckpoint
from .saver import aindexed_writes, indexed_writes


class ShallowRedisStoreSaver(ShallowRedisSaver):
    """ShallowRedisSaver, loading only the writes of the checkpoint it loads."""

    def _load_pending_writes(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str
    ) -> list[PendingWrite]:
        return indexed_writes(self, thread_id, checkpoint_ns, checkpoint_id)


class AsyncShallowRedisStoreSaver(AsyncShallowRedisSaver):
    """AsyncShallowRedisSaver, loading only the writes of the checkpoint it loads."""

    async def _aload_pending_writes(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str
    ) -> list[PendingWrite]:
        return await aindexed_writes(self, thread_id, checkpoint_ns, checkpoint_id)


class _Recorder:
    """Stands in for the saver's client while its `put` runs: what it would store is
    kept, nothing is sent."""

    def __init__(self) -> None:
        self.documents: list[tuple[str, Any]] = []

    def pipeline(self, *_: Any, **__: Any) -> _Recorder:
        return self

    def json(self) -> _Recorder:
        return self

    def set(self, key: str, path: str, document: Any, *_: Any, **__: Any) -> _Recorder:
        self.documents.append((key, document))
        return self

    def execute(self, *_: Any, **__: Any) -> list[bool]:
        return [True]

    def expire(self, *_: Any, **__: Any) -> bool:
        return True

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *_: Any) -> None:
        return None


class _AsyncRecorder(_Recorder):
    async def execute(self, *_: Any, **__: Any) -> list[bool]:  # type: ignore[override]
        return [True]

    async def expire(self, *_: Any, **__: Any) -> bool:  # type: ignore[override]
        return True


@contextmanager
def _recording(saver: Any, recorder: _Recorder) -> Iterator[_Recorder]:
    client, saver._redis = saver._redis, recorder
    try:
        yield recorder
    finally:
        saver._redis = client


def recorded_put(saver: Any, new: NewCheckpoint) -> tuple[str, Any]:
    """The key and the document the saver's `put` of `new` would store."""
    with _recording(saver, _Recorder()) as recorder:
        saver.put(new.config, new.checkpoint, new.metadata, new.new_versions)
    ((key, document),) = recorder.documents
    return key, document


async def arecorded_put(saver: Any, new: NewCheckpoint) -> tuple[str, Any]:
    """The twin of `recorded_put`, through the async saver's `aput`."""
    with _recording(saver, _AsyncRecorder()) as recorder:
        await saver.aput(new.config, new.checkpoint, new.metadata, new.new_versions)
    ((key, document),) = recorder.documents
    return key, document
