"""The Redis driver's sync store: heads found by their pointer keys, every write loaded.

A run reads the keyspace in pages: SCAN walks the latest-checkpoint pointers (memory
flat however many threads), one pipeline reads each page's heads. Loads and writes go
through the saver (`saver.RedisStoreSaver`), so a repair is stored in the saver's own
format; its keys then get the TTL the head has, so nothing outlives its thread. SCAN
may hand out a key twice while the server resizes its table: that head is judged
twice, and its second repair finds the head moved.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ...decisions.plan import NewCheckpoint
from ..base import Head, Selection, chunks, put_new
from ..generic.store import GenericStore, NoStoredBytes
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
from .saver import RedisStoreSaver, every_match


class RedisStore(GenericStore):
    """Sync store over a `RedisStoreSaver`."""

    saver: RedisStoreSaver

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        self.listing = None
        if selection.threads is None:
            self._every_namespace_pointed()
        for pointers in chunks(self._pointers(selection), selection.page_size):
            heads = self._heads(pointers, selection)
            if heads:
                yield heads

    def _every_namespace_pointed(self) -> None:
        """Refuse, before anything is read, a store holding another saver's layout."""
        redis, prefix = self.saver._redis, self.saver._checkpoint_prefix
        pointers = sum(1 for _ in redis.scan_iter(match=pointer_pattern(prefix), count=PAGE))
        indexed = distinct_count(redis.execute_command(*NAMESPACES_INDEXED))  # type: ignore[no-untyped-call]
        refused = unpointed(indexed, pointers)
        if refused is not None:
            raise TargetError(refused)

    def _pointers(self, selection: Selection) -> Iterator[Any]:
        redis, prefix = self.saver._redis, self.saver._checkpoint_prefix
        threads = [None] if selection.threads is None else selection.threads
        for thread_id in threads:
            yield from redis.scan_iter(match=pointer_pattern(prefix, thread_id), count=PAGE)

    def _heads(self, pointers: list[Any], selection: Selection) -> list[Head]:
        """The page's heads, each with what its document proves (`look`)."""
        redis = self.saver._redis
        with redis.pipeline(transaction=False) as pipe:
            for pointer in pointers:
                pipe.get(pointer)
            keys = [key for key in pipe.execute() if key]
        return self._page(keys, selection)

    def _page(self, keys: list[Any], selection: Selection) -> list[Head]:
        """The heads whose documents `keys` name, each with what its document proves."""
        with self.saver._redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.json().get(key)
            documents = pipe.execute(raise_on_error=False)  # a key of the application's own
        found = [(self._head_at(k, d), d) for k, d in zip(keys, documents, strict=True)]
        taken = [(h, d) for h, d in found if h is not None and selection.takes(h.thread_id)]
        written = self._written([head for head, _ in taken])
        heads = [self._judged(h, d, h.key in written, selection) for h, d in taken]
        return sorted(heads, key=lambda head: head.key)

    def _head_at(self, key: Any, document: Any) -> Head | None:
        """The head a document is (None for one gone); `key` names it."""
        return head_of_document(document)

    def _written(self, heads: list[Head]) -> set[tuple[str, str, str]]:
        """Which of the heads have pending writes: one search for the page."""
        if not heads:
            return set()
        index = self.saver.checkpoint_writes_index
        return written_heads(every_match(index, lambda at: written_query(heads, at, PAGE)))

    def _judged(self, head: Head, document: Any, written: bool, selection: Selection) -> Head:
        head = looked(head, document, written, selection)
        if shows_delta(document):
            head = replace(head, history_lost=self.lost_history(head, selection))
        return head

    def type_pages(self, all_checkpoints: bool) -> Iterator[ThreadBlobs]:
        raise NoStoredBytes(NO_TYPES)

    def load(self, head: Head) -> CheckpointTuple | None:
        return self.saver.get_tuple(head.config)

    def write(self, new: NewCheckpoint) -> None:
        """The checkpoint first, then its writes: the saver marks `has_writes` only on a
        checkpoint that exists, and its own loads skip the writes of one not marked."""
        put_new(self.saver, new, writes_first=False)
        self._keep_ttl(new)

    def _keep_ttl(self, new: NewCheckpoint) -> None:
        head, written = written_keys(self.saver, new)
        left = self.saver._redis.pttl(head)
        if left > 0:
            for key in written:
                self.saver._redis.pexpire(key, left)

    def _of_run(self, run_id: str) -> Iterator[CheckpointTuple]:
        """The run's checkpoints: every checkpoint document, its metadata read a page at
        a time (the saver's search index does not hold metadata)."""
        redis = self.saver._redis
        pattern = f"{self.saver._checkpoint_prefix}:*"
        for keys in chunks(redis.scan_iter(match=pattern, count=PAGE), PAGE):
            with redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.json().get(key, "$.metadata", *HEAD_FIELDS)
                found = pipe.execute(raise_on_error=False)
            for fields in found:
                head = of_run(fields, run_id)
                tup = None if head is None else self.saver.get_tuple(head.config)
                if tup is not None:
                    yield tup
