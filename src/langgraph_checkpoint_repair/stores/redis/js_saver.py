"""Savers of LangGraph.js's Redis layout, for a `redis://` TARGET holding it: they load a
checkpoint as `@langchain/langgraph-checkpoint-redis` loads it (`js_base.loaded`) and
store one as it stores one, so the application resumes on a repair; nothing
JavaScript runs here. Every pending write of a checkpoint is read, whatever its
`has_writes` flag says.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import redis
import redis.asyncio as aredis
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from redisvl.index import AsyncSearchIndex, SearchIndex

from ...js.rows import next_config, next_version
from ...js.values import js_serde
from . import js_base as jb
from .steps import text


def _where(config: RunnableConfig) -> tuple[str, str, str | None]:
    where = config["configurable"]
    return str(where["thread_id"]), str(where.get("checkpoint_ns", "")), where.get("checkpoint_id")


def _listed(doc: Any, before: RunnableConfig | None, wanted: dict[str, Any] | None) -> bool:
    """Whether a listing hands out a document: older than `before`, its stored metadata
    holding each key of the filter (read before the checkpoint is loaded, so a listing
    filtered by run loads the run's alone)."""
    if not isinstance(doc, dict):
        return False
    below = before["configurable"].get("checkpoint_id") if before else None
    if below and doc["checkpoint_id"] >= below:
        return False
    metadata = doc.get("metadata")
    stored = metadata if isinstance(metadata, dict) else {}
    return all(stored.get(k) == v for k, v in (wanted or {}).items())


def _listing_pattern(config: RunnableConfig | None) -> str:
    """Every checkpoint key, or a namespace's (what LangGraph.js lists)."""
    if config is None:
        return jb.thread_pattern(None)
    thread_id, ns, _ = _where(config)
    return jb.namespace_pattern(thread_id, ns)


def _index(saver: Any, kind: Any) -> None:
    """The saver's handles on LangGraph.js's indexes (`kind`: redisvl's sync or async
    index), named as the Redis pruner and stores search them; nothing is sent."""
    made = {
        name: kind.from_dict(schema, redis_client=saver._redis)
        for name, schema in jb.SCHEMAS.items()
    }
    saver.checkpoints_index = made["checkpoints"]
    saver.checkpoint_writes_index = made["writes"]
    saver.checkpoint_blobs_index = made["blobs"]


def _ns(doc: dict[str, Any]) -> str:
    return jb.stored_ns(doc.get("checkpoint_ns"))


class _JsRedis:
    """What both savers share: LangGraph.js's version scheme and serializer."""

    def get_next_version(self, current: Any, channel: None) -> Any:
        return next_version(current if isinstance(current, int) else None)


class JsRedisSaver(_JsRedis, BaseCheckpointSaver[Any]):
    """LangGraph.js's Redis saver's layout, read and written from Python (sync)."""

    def __init__(self, url: str) -> None:
        super().__init__(serde=js_serde(None))
        self._redis = redis.Redis.from_url(url)
        indexes = {
            n: SearchIndex.from_dict(s, redis_client=self._redis) for n, s in jb.SCHEMAS.items()
        }
        self.checkpoints_index = indexes["checkpoints"]
        self.checkpoint_writes_index = indexes["writes"]
        self.checkpoint_blobs_index = indexes["blobs"]

    def _json(self, keys: Sequence[str], *paths: str) -> list[Any]:
        with self._redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.json().get(key, *paths)
            return list(pipe.execute())

    def head_key(self, thread_id: str, ns: str) -> str | None:
        """The key LangGraph.js loads a namespace's head from: the greatest."""
        keys = sorted(text(k) for k in self._redis.scan_iter(jb.namespace_pattern(thread_id, ns)))
        return keys[-1] if keys else None

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, ns, checkpoint_id = _where(config)
        key = jb.checkpoint_key(thread_id, ns, checkpoint_id) if checkpoint_id else None
        key = key or self.head_key(thread_id, ns)
        (doc,) = self._json([key]) if key else [None]
        return None if not isinstance(doc, dict) else self._loaded(doc, thread_id, ns)

    def _loaded(self, doc: dict[str, Any], thread_id: str, ns: str) -> CheckpointTuple:
        missing = jb.missing_blobs(doc, thread_id, ns)
        blobs = dict(zip(missing, self._json(list(missing.values())), strict=True))
        pattern = jb.writes_pattern(thread_id, ns, doc["checkpoint_id"])
        keys = [text(k) for k in self._redis.scan_iter(pattern)]
        writes = [w for w in self._json(keys) if isinstance(w, dict)]
        return jb.loaded(doc, blobs, writes)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """A namespace's checkpoints, newest first (every checkpoint without `config`)."""
        keys = [text(k) for k in self._redis.scan_iter(_listing_pattern(config))]
        given = 0
        for key in sorted(keys, reverse=True):
            (doc,) = self._json([key])
            if limit is not None and given >= limit:
                return
            if _listed(doc, before, filter):
                given += 1
                yield self._loaded(doc, doc["thread_id"], _ns(doc))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id, ns, _ = _where(config)
        has_writes = bool(self._redis.exists(jb.zset_key(thread_id, ns, checkpoint["id"])))
        documents = jb.checkpoint_documents(config, checkpoint, metadata, new_versions, has_writes)
        with self._redis.pipeline(transaction=False) as pipe:
            for key, doc in documents:
                pipe.json().set(key, "$", doc)
            pipe.execute()
        return next_config(config, checkpoint)  # type: ignore[return-value]

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id, ns, checkpoint_id = _where(config)
        found = jb.write_documents(config, writes, task_id)
        with self._redis.pipeline(transaction=False) as pipe:
            for key, doc, _ in found:
                pipe.json().set(key, "$", doc)
            if found:
                zset = jb.zset_key(thread_id, ns, str(checkpoint_id))
                pipe.zadd(zset, {key: score for key, _, score in found})
            pipe.execute()
        key = jb.checkpoint_key(thread_id, ns, str(checkpoint_id))
        if self._redis.exists(key):
            self._redis.json().set(key, "$.has_writes", "true")


class AsyncJsRedisSaver(_JsRedis, BaseCheckpointSaver[Any]):
    """The twin of `JsRedisSaver`, on redis-py's async client."""

    def __init__(self, url: str) -> None:
        super().__init__(serde=js_serde(None))
        self._redis = aredis.Redis.from_url(url)
        _index(self, AsyncSearchIndex)

    async def _json(self, keys: Sequence[str], *paths: str) -> list[Any]:
        pipe = self._redis.pipeline(transaction=False)
        for key in keys:
            pipe.json().get(key, *paths)
        return list(await pipe.execute())

    async def _keys(self, pattern: str) -> list[str]:
        return [text(k) async for k in self._redis.scan_iter(pattern)]

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, ns, checkpoint_id = _where(config)
        key = jb.checkpoint_key(thread_id, ns, checkpoint_id) if checkpoint_id else None
        if key is None:
            keys = sorted(await self._keys(jb.namespace_pattern(thread_id, ns)))
            key = keys[-1] if keys else None
        (doc,) = await self._json([key]) if key else [None]
        return None if not isinstance(doc, dict) else await self._loaded(doc, thread_id, ns)

    async def _loaded(self, doc: dict[str, Any], thread_id: str, ns: str) -> CheckpointTuple:
        missing = jb.missing_blobs(doc, thread_id, ns)
        blobs = dict(zip(missing, await self._json(list(missing.values())), strict=True))
        keys = await self._keys(jb.writes_pattern(thread_id, ns, doc["checkpoint_id"]))
        writes = [w for w in await self._json(keys) if isinstance(w, dict)]
        return jb.loaded(doc, blobs, writes)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        given = 0
        for key in sorted(await self._keys(_listing_pattern(config)), reverse=True):
            (doc,) = await self._json([key])
            if limit is not None and given >= limit:
                return
            if _listed(doc, before, filter):
                given += 1
                yield await self._loaded(
                    doc, doc["thread_id"], jb.stored_ns(doc.get("checkpoint_ns"))
                )

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id, ns, _ = _where(config)
        has_writes = bool(await self._redis.exists(jb.zset_key(thread_id, ns, checkpoint["id"])))
        documents = jb.checkpoint_documents(config, checkpoint, metadata, new_versions, has_writes)
        pipe = self._redis.pipeline(transaction=False)
        for key, doc in documents:
            pipe.json().set(key, "$", doc)
        await pipe.execute()
        return next_config(config, checkpoint)  # type: ignore[return-value]

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id, ns, checkpoint_id = _where(config)
        found = jb.write_documents(config, writes, task_id)
        pipe = self._redis.pipeline(transaction=False)
        for key, doc, _ in found:
            pipe.json().set(key, "$", doc)
        if found:
            pipe.zadd(jb.zset_key(thread_id, ns, str(checkpoint_id)), {k: s for k, _, s in found})
        await pipe.execute()
        key = jb.checkpoint_key(thread_id, ns, str(checkpoint_id))
        if await self._redis.exists(key):
            await self._redis.json().set(key, "$.has_writes", "true")
