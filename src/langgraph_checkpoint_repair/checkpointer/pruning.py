"""The wrapper's `prune` and `aprune`, where the inner saver class has them: LangGraph's
signature, and over PostgreSQL a prune that keeps what each thread needs (delta threads
included, which LangGraph's own `keep_latest` refuses), as `langgraph-repair prune`
does, with no archive (LangGraph's keeps none). The Agent Server's TTL sweep
(`checkpointer.ttl`, `strategy: keep_latest`) calls `aprune`.

`strategy="delete"`, and a saver whose rows no pruner deletes, go to the inner
saver's own method. The pruners load at the first call: a wrapper that never prunes
loads none of them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from .. import metrics
from ..retention.outcome import ThreadPruned
from ..retention.rules import PruneRules

logger = logging.getLogger("langgraph_checkpoint_repair")

STRATEGIES = ("keep_latest", "delete")
NO_RECORD = ""
"""The run id of a wrapper's prune, which records no run and keeps no archive."""


def checked(thread_ids: Sequence[str], strategy: str) -> list[str]:
    """LangGraph's own checks of the arguments."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown prune strategy: {strategy!r}")
    return [str(thread_id) for thread_id in thread_ids]


def safe_prune(inner: Callable[..., Any]) -> Callable[..., Any]:
    """The wrapper's `prune`, over the inner class's `inner` (kept for `delete`)."""

    def prune(self: Any, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        from ..stores.pruners import can_prune, is_async, pruner_for

        ids = checked(thread_ids, strategy)
        saver = self.saver
        if strategy == "delete" or not can_prune(saver):
            return inner(saver, ids, strategy=strategy)  # type: ignore[no-any-return]
        if is_async(saver):  # as LangGraph's async savers do: on the saver's own loop
            future = asyncio.run_coroutine_threadsafe(self.aprune(ids), saver.loop)
            return future.result()  # type: ignore[no-any-return]
        pruner = pruner_for(saver)
        pruner.ready(archive=False, writes=True, recorded=False)
        for thread_id in ids:
            _logged(pruner.prune_thread(NO_RECORD, thread_id, PruneRules(archive=False)))
        return None

    prune.__doc__ = inner.__doc__
    return prune


def safe_aprune(inner: Callable[..., Any]) -> Callable[..., Any]:
    """The wrapper's `aprune`, the twin of `safe_prune`."""

    async def aprune(
        self: Any, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        from ..stores.pruners import can_prune, is_async, pruner_for

        ids = checked(thread_ids, strategy)
        saver = self.saver
        if strategy == "delete" or not can_prune(saver):
            await inner(saver, ids, strategy=strategy)
            return
        if not is_async(saver):
            await asyncio.to_thread(self.prune, ids)
            return
        pruner = pruner_for(saver, asynchronous=True)
        await pruner.ready(archive=False, writes=True, recorded=False)
        for thread_id in ids:
            _logged(await pruner.prune_thread(NO_RECORD, thread_id, PruneRules(archive=False)))

    aprune.__doc__ = inner.__doc__
    return aprune


def _logged(outcome: ThreadPruned) -> None:
    """Counted on the metrics; a thread left as it was, logged."""
    if outcome.pruned:
        metrics.record_pruned("wrapper", outcome.deleted.rows)
    if outcome.skipped is not None:
        logger.info("prune left thread %r as it was: %s", outcome.thread_id, outcome.skipped)
