"""The wrapper's `delete_for_runs` and `adelete_for_runs` where the inner saver class
has none and the package writes its store's rows (PostgreSQL, SQLite): the Agent
Server's `multitask_strategy="rollback"` calls `adelete_for_runs` with a cancelled
run's id. Each thread holding a checkpoint of the run reads again as before it
(`batch.rollback`), delta threads included; a thread a later run built on keeps what
that run needs, and is logged. As LangGraph's deletes, it keeps no archive."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..retention.outcome import ThreadPruned
from .copying import OWN_COPIES

logger = logging.getLogger("langgraph_checkpoint_repair")
UNRECORDED = {"archive": False, "recorded": False}


def delete_for_runs(self: Any, run_ids: Sequence[str]) -> None:
    """Delete the runs' checkpoints and writes: each thread reads as before them."""
    from ..batch.rollback import rollback_runs

    rollback_runs(self.saver, run_ids, on_thread=_logged, **UNRECORDED)


async def adelete_for_runs(self: Any, run_ids: Sequence[str]) -> None:
    """The async twin of `delete_for_runs`."""
    from ..batch.rollback import arollback_runs

    await arollback_runs(self.saver, run_ids, on_thread=_logged, **UNRECORDED)


def _logged(outcome: ThreadPruned) -> None:
    """A thread a later run built on or descends from, or one left as it was, logged."""
    said = outcome.detail or outcome.skipped
    if outcome.skipped is not None:
        logger.warning("rollback left thread %r as it was: %s", outcome.thread_id, said)
    elif said:
        logger.warning("rollback of thread %r: %s", outcome.thread_id, said)


OWN_ROLLBACKS = {"delete_for_runs": delete_for_runs, "adelete_for_runs": adelete_for_runs}
OWN_METHODS = {**OWN_COPIES, **OWN_ROLLBACKS}
"""The wrapper's own copies and rollbacks, offered where the inner class has none and
the package writes its store's rows (`pruning.offered_over`)."""
