"""The Redis driver's sync store over the shallow savers' layout: one document per
(thread, namespace), `checkpoint:{thread}:{namespace}`, replaced at every step.

Heads are the documents themselves, walked with SCAN a page at a time. Before a whole
store is read, the server's index must hold one document per pair and no latest
pointer, so no other saver's checkpoints go unseen. A repair replaces the head's
document atomically, its bytes archived, and undo puts them back (`replacing`): the
layout keeps no history to append to.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ...decisions.plan import NewCheckpoint
from ...decisions.races import Planned, WriteOutcome, head_moved, thread_key
from ..base import Head, Selection, chunks
from ..claims import claim
from ..opening_errors import TargetError
from .base import (
    DOCUMENTS_INDEXED,
    NAMESPACES_INDEXED,
    PAGE,
    distinct_count,
    document_pattern,
    not_shallow,
    search_total,
    shallow_head,
    write_keys,
)
from .look import looked, lost_in_document, shows_delta
from .replacing import put_back_steps, registry_keys, replace_steps
from .running import StepRunner
from .shallow_saver import ShallowRedisStoreSaver, recorded_put
from .sync import RedisStore


def written_keys(saver: Any, new: NewCheckpoint) -> list[str]:
    """The keys the saver's `put_writes` of `new`'s writes store: each write's document
    and the namespace's registries."""
    where = new.config["configurable"]
    thread_id, ns = where["thread_id"], where.get("checkpoint_ns", "")
    return (registry_keys(thread_id, ns) if new.writes else []) + write_keys(saver, new)


class ShallowRedisStore(RedisStore):
    """Sync store over a `ShallowRedisStoreSaver`."""

    saver: ShallowRedisStoreSaver  # type: ignore[assignment]
    replaces_heads = True
    """A repair replaces the head's document; undo puts its bytes back (`put_back`)."""

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        self.listing = None
        if selection.threads is None:
            self._one_document_each()
        redis, prefix = self.saver._redis, self.saver._checkpoint_prefix
        threads = [None] if selection.threads is None else selection.threads
        found = (
            key
            for thread_id in threads
            for key in redis.scan_iter(match=document_pattern(prefix, thread_id), count=PAGE)
        )
        for keys in chunks(found, selection.page_size):
            heads = self._page(keys, selection)
            if heads:
                yield heads

    def _one_document_each(self) -> None:
        """Refuse, before anything is read, a store holding another saver's layout."""
        redis = self.saver._redis
        pairs = distinct_count(redis.execute_command(*NAMESPACES_INDEXED))  # type: ignore[no-untyped-call]
        refused = not_shallow(search_total(redis.execute_command(*DOCUMENTS_INDEXED)), pairs)  # type: ignore[no-untyped-call]
        if refused is not None:
            raise TargetError(refused)

    def _head_at(self, key: Any, document: Any) -> Head | None:
        return shallow_head(self.saver, key, super()._head_at(key, document))

    def _judged(self, head: Head, document: Any, written: bool, selection: Selection) -> Head:
        head = looked(head, document, written, selection)
        if shows_delta(document):
            head = replace(head, history_lost=lost_in_document(document, selection.channels))
        return head

    def load(self, head: Head) -> CheckpointTuple | None:
        """The head, while it is the checkpoint named: a shallow saver loads whatever
        the namespace holds now, whatever id it is asked for."""
        tup = self.saver.get_tuple(head.config)
        if tup is None or tup.config["configurable"]["checkpoint_id"] != head.checkpoint_id:
            return None
        return tup

    def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """Claim the head, then replace its document in one transaction, unless it moved."""
        with claim(self.saver, thread_key(planned)) as mine:
            if not mine:
                return "claimed"
            moved = head_moved(self.head_id(*thread_key(planned)), planned, new)
            if moved is not None:
                return moved
            key, document = recorded_put(self.saver, new)
            where = (planned.thread_id, planned.checkpoint_ns, planned.checkpoint_id)
            outcome, left = StepRunner(self.saver).driven(
                replace_steps(run_id, where, key, document)
            )
            if outcome == "repaired":
                self._write_writes(new, left)
            return outcome

    def _write_writes(self, new: NewCheckpoint, left: int) -> None:
        """The repair's pending writes, by the saver, with the document's time to live."""
        for task_id, writes in new.task_writes():
            self.saver.put_writes(new.written_config, writes, task_id)
        if left > 0:
            for key in written_keys(self.saver, new):
                self.saver._redis.pexpire(key, left)

    def put_back(self, undo_of: str, where: tuple[str, str, str]) -> WriteOutcome:
        """Undo of one repair: the replaced bytes RESTOREd while the document is still
        the repair (`where`: thread, namespace, the repair's checkpoint id)."""
        key = self.saver._make_shallow_redis_checkpoint_key(where[0], where[1])
        return StepRunner(self.saver).driven(put_back_steps(undo_of, where, key))
