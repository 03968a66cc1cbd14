"""A prune of LangGraph.js's Redis layout (`js_base`): the steps of `prune_base` with the
layout's own keys, and its sync and async pruners.

A checkpoint loads the channels it does not hold from the blob of their version, so a
row holds a channel inline or in a blob, and a blob goes only when no kept checkpoint
names its version (`retention.keep`). A thread's keys come from LangGraph.js's own
indexes, searched by thread; a cleared parent pointer is stored as LangGraph.js stores
a first checkpoint's, `null`. Threads are listed from the checkpoint documents
themselves (the layout keeps no pointer a thread): one id per thread is kept while the
scan runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...retention.keep import StoredCheckpoint, ThreadPlan
from ..base import chunks
from . import js_base as jb
from . import prune_base as pb
from .aprune import AsyncRedisPruner
from .archive import Doomed
from .base import PAGE
from .prune import RedisPruner
from .steps import Search, Steps, text


@dataclass
class JsThreadKeys(pb.ThreadKeys):
    """A LangGraph.js thread's keys: its documents, writes and the blobs stored."""

    blobs: set[tuple[str, str, str]] = field(default_factory=set)
    """(namespace, channel, version) of each blob document."""


def _ns(doc: Any) -> str:
    return jb.stored_ns(text(getattr(doc, "checkpoint_ns", "")))


def thread_keys(thread_id: str) -> Steps[pb.ThreadKeys]:
    """The thread's keys, from LangGraph.js's three indexes."""
    found = JsThreadKeys()
    named = ["checkpoint_ns", "checkpoint_id"]
    for doc in (yield Search("checkpoints", lambda at: pb.by_thread(thread_id, named, at))):
        found.checkpoints[(_ns(doc), text(doc.checkpoint_id))] = text(doc.id)
    writes = yield Search("writes", lambda at: pb.by_thread(thread_id, [*named, "channel"], at))
    for doc in writes:
        where = (_ns(doc), text(doc.checkpoint_id))
        found.writes.setdefault(where, []).append((text(doc.id), text(doc.channel)))
    blob_fields = ["checkpoint_ns", "channel", "version"]
    for doc in (yield Search("blobs", lambda at: pb.by_thread(thread_id, blob_fields, at))):
        found.blobs.add((_ns(doc), text(doc.channel), text(doc.version)))
    return found


def stored_rows(keys: pb.ThreadKeys, replies: Sequence[Any]) -> list[StoredCheckpoint] | None:
    """The rows `prune_base.stored_rows` reads, each also holding the channels whose
    version has a blob."""
    rows = pb.stored_rows(keys, replies)
    if rows is None or not isinstance(keys, JsThreadKeys):
        return rows
    return [replace(row, holds=row.holds | _in_blobs(row, keys.blobs)) for row in rows]


def _in_blobs(row: StoredCheckpoint, blobs: set[tuple[str, str, str]]) -> frozenset[str]:
    return frozenset(c for c, v in row.versions.items() if (row.checkpoint_ns, c, v) in blobs)


def doomed_keys(plan: ThreadPlan, keys: pb.ThreadKeys, thread_id: str) -> list[Doomed]:
    """Each deleted checkpoint's document, writes and their sorted set, and each blob no
    kept checkpoint names."""
    doomed = []
    for ns, ids in plan.deleted.items():
        for cid in ids:
            doomed.append(Doomed(keys.checkpoints[(ns, cid)], "checkpoint"))
            doomed += [Doomed(key, "write") for key, _ in keys.writes.get((ns, cid), [])]
            doomed.append(Doomed(jb.zset_key(thread_id, ns, cid), "registry"))
    for ns, pairs in plan.blobs.items():
        doomed += [Doomed(jb.blob_key(thread_id, ns, c, v), "blob") for c, v in pairs]
    return doomed


LAYOUT = pb.Layout(thread_keys, stored_rows, doomed_keys, pointer=None, cleared="null")


class Threads:
    """The threads a page of checkpoint documents names, each handed out once."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def new(self, documents: Sequence[Any]) -> list[str]:
        fresh = set()
        for fields in documents:
            named = jb.identity(fields)
            if named is not None and named[0] not in self.seen:
                fresh.add(named[0])
        self.seen |= fresh
        return sorted(fresh)


class JsRedisPruner(RedisPruner):
    """Prunes, restores and forgets on LangGraph.js's Redis layout (sync)."""

    not_compacted = "a LangGraph.js thread: its snapshot would be written in Python's format"

    def layout(self) -> pb.Layout:
        return LAYOUT

    def thread_pages(self, threads: Sequence[str] | None) -> Iterator[list[str]]:
        if threads is not None:
            yield from chunks(self._present(threads), PAGE)
            return
        seen, redis = Threads(), self.steps.redis
        for keys in chunks(redis.scan_iter(match=jb.thread_pattern(None), count=PAGE), PAGE):
            with redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.json().get(key, *jb.IDENTITY)
                page = seen.new(pipe.execute(raise_on_error=False))
            if page:
                yield page

    def _present(self, threads: Sequence[str]) -> list[str]:
        redis = self.steps.redis
        return [t for t in threads if next(iter(redis.scan_iter(jb.thread_pattern(t))), None)]


class AsyncJsRedisPruner(AsyncRedisPruner):
    """The twin of `JsRedisPruner`."""

    not_compacted = JsRedisPruner.not_compacted

    def layout(self) -> pb.Layout:
        return LAYOUT

    async def thread_pages(self, threads: Sequence[str] | None) -> AsyncIterator[list[str]]:
        if threads is not None:
            yield [t for t in threads if await self._has(t)]
            return
        seen, keys = Threads(), []
        async for key in self.steps.redis.scan_iter(match=jb.thread_pattern(None), count=PAGE):
            keys.append(text(key))
            if len(keys) >= PAGE:
                if page := seen.new(await self.saver._json(keys, *jb.IDENTITY)):
                    yield page
                keys = []
        if keys and (page := seen.new(await self.saver._json(keys, *jb.IDENTITY))):
            yield page

    async def _has(self, thread_id: str) -> bool:
        async for _ in self.steps.redis.scan_iter(jb.thread_pattern(thread_id)):
            return True
        return False
