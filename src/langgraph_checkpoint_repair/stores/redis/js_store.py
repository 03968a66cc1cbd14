"""The Redis driver's stores over LangGraph.js's Redis layout (`js_base`), sync and async.

A run lists every checkpoint key with SCAN and reads each one's identity a page at a
time; a namespace's head is its greatest id, as LangGraph.js sorts its keys. The run
keeps one id per namespace (not per checkpoint) until the scan ends, then hands the
heads out a page at a time. A key that is not where LangGraph.js would store its
document (another saver's layout) refuses the whole run before anything is written.
Loads and writes go through the layout's savers (`js_saver`); a repair's keys get the
head's remaining time to live.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP

from ...decisions.plan import NewCheckpoint
from ..base import Head, Selection, aput_new, chunks, put_new
from ..generic.store import AsyncGenericStore, GenericStore, NoStoredBytes
from ..opening_errors import TargetError
from ..stored_values import ThreadBlobs
from . import js_base as jb
from .base import NO_TYPES, PAGE
from .js_saver import AsyncJsRedisSaver, JsRedisSaver
from .steps import text

FOREIGN = (
    "the Redis key {key!r} holds a checkpoint LangGraph.js's Redis saver would not store "
    "there (another saver's layout): the store is not read"
)


class Heads:
    """The greatest checkpoint id of each (thread, namespace) seen so far."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], str] = {}

    def add(self, keys: Iterable[Any], documents: Iterable[Any]) -> None:
        for key, fields in zip(keys, documents, strict=True):
            named = jb.identity(fields)
            if named is None:
                continue  # gone since the scan listed it
            thread_id, ns, checkpoint_id = named
            if text(key) != jb.checkpoint_key(thread_id, ns, checkpoint_id):
                raise TargetError(FOREIGN.format(key=text(key)))
            where = (thread_id, ns)
            self.found[where] = max(self.found.get(where, ""), checkpoint_id)

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        heads = [
            Head(thread_id, ns, self.found[(thread_id, ns)])
            for thread_id, ns in sorted(self.found)
            if selection.takes(thread_id)
        ]
        yield from chunks(heads, selection.page_size)


def written_keys(new: NewCheckpoint) -> list[str]:
    """Every key writing `new` stores: its document, a blob per channel written, its
    writes and their sorted set."""
    where = new.config["configurable"]
    thread_id, ns = str(where["thread_id"]), str(where.get("checkpoint_ns", ""))
    keys = [jb.checkpoint_key(thread_id, ns, new.checkpoint_id)]
    keys += [jb.blob_key(thread_id, ns, c, v) for c, v in new.new_versions.items()]
    for task_id, writes in new.task_writes():
        keys += [
            jb.write_key(thread_id, ns, new.checkpoint_id, task_id, WRITES_IDX_MAP.get(c, n))
            for n, (c, _) in enumerate(writes)
        ]
    if new.writes:
        keys.append(jb.zset_key(thread_id, ns, new.checkpoint_id))
    return keys


def head_key(new: NewCheckpoint) -> str:
    """The key of the head `new` is written on."""
    where = new.config["configurable"]
    return jb.checkpoint_key(
        where["thread_id"], where.get("checkpoint_ns", ""), where["checkpoint_id"]
    )


class JsRedisStore(GenericStore):
    """Sync store over a `JsRedisSaver`."""

    saver: JsRedisSaver

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        self.listing = None
        heads = Heads()
        redis = self.saver._redis
        for thread_id in [None] if selection.threads is None else selection.threads:
            for keys in chunks(redis.scan_iter(jb.thread_pattern(thread_id), count=PAGE), PAGE):
                with redis.pipeline(transaction=False) as pipe:
                    for key in keys:
                        pipe.json().get(key, *jb.IDENTITY)
                    heads.add(keys, pipe.execute(raise_on_error=False))
        yield from heads.pages(selection)

    def type_pages(self, all_checkpoints: bool) -> Iterator[ThreadBlobs]:
        raise NoStoredBytes(NO_TYPES)

    def write(self, new: NewCheckpoint) -> None:
        put_new(self.saver, new)
        head = new.config["configurable"]
        left = self.saver._redis.pttl(
            jb.checkpoint_key(
                head["thread_id"], head.get("checkpoint_ns", ""), head["checkpoint_id"]
            )
        )
        if isinstance(left, int) and left > 0:
            for key in written_keys(new):
                self.saver._redis.pexpire(key, left)


class AsyncJsRedisStore(AsyncGenericStore):
    """Async store over an `AsyncJsRedisSaver`."""

    saver: AsyncJsRedisSaver

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        self.listing = None
        heads = Heads()
        for thread_id in [None] if selection.threads is None else selection.threads:
            keys = await self.saver._keys(jb.thread_pattern(thread_id))
            for listed in chunks(keys, PAGE):
                heads.add(listed, await self.saver._json(listed, *jb.IDENTITY))
        for page in heads.pages(selection):
            yield page

    def type_pages(self, all_checkpoints: bool) -> AsyncIterator[ThreadBlobs]:
        raise NoStoredBytes(NO_TYPES)

    async def write(self, new: NewCheckpoint) -> None:
        await aput_new(self.saver, new)
        head = new.config["configurable"]
        left = await self.saver._redis.pttl(
            jb.checkpoint_key(
                head["thread_id"], head.get("checkpoint_ns", ""), head["checkpoint_id"]
            )
        )
        if isinstance(left, int) and left > 0:
            for key in written_keys(new):
                await self.saver._redis.pexpire(key, left)
