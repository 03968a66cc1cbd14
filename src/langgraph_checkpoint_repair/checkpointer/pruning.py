"""The wrapper's `prune` and `aprune`: LangGraph's signature, and over PostgreSQL and
SQLite a prune that keeps what each thread needs (delta threads included, which
LangGraph's own `keep_latest` refuses), as `langgraph-repair prune` does, with no
archive (LangGraph's keeps none). The Agent Server's TTL sweep (`checkpointer.ttl`)
calls `aprune` with `keep_latest`, or with `delete_all` for its DELETE strategy.

`keep_latest` compacts delta threads first, as `prune --compact` does: their message
channels are snapshotted under each head, so a young deep agent's thread shrinks too
(a delta channel of anything else, deep agents' `files`, keeps its chain).

The wrapper offers them where the inner saver class has them, and where a pruner
deletes its store's rows (an `AsyncSqliteSaver` has no `aprune` of its own): `aprune`
on a saver that talks to its database asynchronously, `prune` on one that does not.
`delete` and `delete_all` delete the threads whole, by the inner saver's own delete;
a saver whose rows no pruner deletes prunes by its own method, except a thread that
holds a delta channel, which it never gets (that prune would cut the chain the channel
is rebuilt from, as the Redis savers' does): such a thread is logged and left as it
was. The pruners load at
the first call: a wrapper that never prunes loads none of them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from .. import metrics
from ..retention.outcome import ThreadPruned
from ..retention.rules import PruneRules

logger = logging.getLogger("langgraph_checkpoint_repair")

STRATEGIES = ("keep_latest", "delete", "delete_all")
"""`delete_all` is what the Agent Server's TTL sweep sends for its DELETE strategy."""
DELETES = ("delete", "delete_all")
NO_RECORD = ""
"""The run id of a wrapper's prune, which records no run and keeps no archive."""
COMPACTING = PruneRules(archive=False, compact=True)
"""A wrapper's `keep_latest`: a delta thread gets its snapshot under each head first
(`batch.compaction`, proven before anything is deleted), so it keeps at most two
checkpoints a namespace; a channel that does not hold messages keeps its chain."""


def checked(thread_ids: Sequence[str], strategy: str) -> list[str]:
    """LangGraph's own checks of the arguments."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown prune strategy: {strategy!r}")
    return [str(thread_id) for thread_id in thread_ids]


def safe_prune(inner: Callable[..., Any] | None) -> Callable[..., Any]:
    """The wrapper's `prune`, over the inner class's own `inner` (None: it has none)."""

    def prune(self: Any, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        from ..stores.pruners import can_prune, is_async, pruner_for

        ids = checked(thread_ids, strategy)
        saver = self.saver
        if strategy in DELETES:
            return _deleted(saver, inner, ids)
        if not can_prune(saver):
            plain = [t for t in ids if not _refused(t, _delta_in(saver.list(_thread(t))))]
            if plain:  # some savers refuse an empty list
                inner(saver, plain, strategy=strategy)  # type: ignore[misc]
            return None
        if is_async(saver):  # as LangGraph's async savers do: on the saver's own loop
            future = asyncio.run_coroutine_threadsafe(self.aprune(ids), saver.loop)
            return future.result()  # type: ignore[no-any-return]
        from ..batch.pruning import PruneReport, prune_one

        pruner = pruner_for(saver)
        pruner.ready(archive=False, writes=True, recorded=False, compact=True)
        report = PruneReport(NO_RECORD, dry_run=False, archived=False)
        for thread_id in ids:
            _logged(prune_one(saver, pruner, report, thread_id, COMPACTING))
        return None

    prune.__doc__ = PRUNE_DOC if inner is None else inner.__doc__
    return prune


def safe_aprune(inner: Callable[..., Any] | None) -> Callable[..., Any]:
    """The wrapper's `aprune`, the twin of `safe_prune`."""

    async def aprune(
        self: Any, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        from ..stores.pruners import can_prune, is_async, pruner_for

        ids = checked(thread_ids, strategy)
        saver = self.saver
        if strategy in DELETES:
            await _adeleted(saver, inner, ids)
            return
        if not can_prune(saver):
            plain = [t for t in ids if not _refused(t, await _adelta_in(saver, t))]
            if plain:
                await inner(saver, plain, strategy=strategy)  # type: ignore[misc]
            return
        if not is_async(saver):
            await asyncio.to_thread(self.prune, ids)
            return
        from ..batch.pruning import PruneReport, aprune_one

        pruner = pruner_for(saver, asynchronous=True)
        await pruner.ready(archive=False, writes=True, recorded=False, compact=True)
        report = PruneReport(NO_RECORD, dry_run=False, archived=False)
        for thread_id in ids:
            _logged(await aprune_one(saver, pruner, report, thread_id, COMPACTING))

    aprune.__doc__ = PRUNE_DOC if inner is None else inner.__doc__
    return aprune


PRUNE_DOC = """Prune the threads' checkpoints: `keep_latest` keeps each namespace's head with
what it needs (a delta chain, a question waiting on a human, pending sends); `delete`
and `delete_all` delete the threads whole."""


def _deleted(saver: Any, inner: Callable[..., Any] | None, ids: list[str]) -> None:
    """The threads deleted whole: by the inner class's own prune (one transaction on
    LangGraph's savers), else thread by thread."""
    if inner is not None:
        inner(saver, ids, strategy="delete")
        return
    for thread_id in ids:
        saver.delete_thread(thread_id)


async def _adeleted(saver: Any, inner: Callable[..., Any] | None, ids: list[str]) -> None:
    if inner is not None:
        await inner(saver, ids, strategy="delete")
        return
    for thread_id in ids:
        await saver.adelete_thread(thread_id)


DELTA_REFUSED = (
    "prune left thread %r as it was: its delta channels (%s) are rebuilt from earlier "
    "checkpoints, which this saver's own prune would delete; the package prunes them "
    "only on a store it reads itself (postgresql://, sqlite:///)"
)


def _thread(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def _delta_in(listed: Any) -> set[str]:
    """The delta channels any of the thread's checkpoints shows."""
    from ..delta.channels import delta_channel_names

    return {name for tup in listed for name in delta_channel_names(tup)}


async def _adelta_in(saver: Any, thread_id: str) -> set[str]:
    return _delta_in([tup async for tup in saver.alist(_thread(thread_id))])


def _refused(thread_id: str, channels: set[str]) -> bool:
    """A thread holding a delta channel is never handed to a saver's own prune: the
    channel's value needs the chain that prune would cut. Logged."""
    if channels:
        logger.warning(DELTA_REFUSED, thread_id, ", ".join(sorted(channels)))
    return bool(channels)


def _logged(outcome: ThreadPruned) -> None:
    """Counted on the metrics; a thread left as it was, logged."""
    if outcome.pruned:
        metrics.record_pruned("wrapper", outcome.deleted.rows)
    if outcome.skipped is not None:
        logger.info("prune left thread %r as it was: %s", outcome.thread_id, outcome.skipped)


def offered_over(inner: type, name: str) -> bool:
    """Whether the wrapper offers `name` (a prune or a copy) of its own over a class that
    has none: the package writes its store's rows, and the method is the twin the saver
    talks in (`aprune`, `acopy_thread` for an async saver; `prune`, `copy_thread` for a
    sync one)."""
    from ..stores.drivers import talks_async
    from ..stores.pruners import prunes_class

    return prunes_class(inner, name) and name.startswith("a") == talks_async(inner)
