"""A loaded head's stale answer left out (`stale_answers`), so LangGraph asks again.

The rule is judged on the head's own pending writes. Only when the head cannot
tell (a null-task answer, an open interrupt, no task here took that answer) are
the writes of its tasks' subgraphs read, through the saver's `list` over the
thread: that is one head shape, never a healthy thread's load. Nothing is written:
the stored row stays until the batch job deletes it (or a new answer replaces it).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..engine import RepairAction
from ..metrics import record_repairs
from ..stale_answers import (
    RESUME_CHANNEL,
    Write,
    asubgraph_writes,
    stale_answer,
    subgraph_writes,
    without_null_answers,
)
from .view import where

logger = logging.getLogger("langgraph_checkpoint_repair")

DROPPED = {RESUME_CHANNEL: (RepairAction("resume_dropped", None, None, -1),)}
"""What a dropped answer counts as in the metrics: one action on channel `__resume__`."""
REMEMBERED = 10_000
"""Heads whose stale answer this process has logged, at most (the oldest go first)."""
_logged: OrderedDict[tuple[Any, ...], None] = OrderedDict()


def without_stale_answer(saver: BaseCheckpointSaver[Any], tup: CheckpointTuple) -> CheckpointTuple:
    """`tup` less its stale answer; the same tuple when it holds none."""
    try:
        below = subgraph_writes(saver, tup)
    except Exception:  # a subgraph's rows that do not load: the load goes on as stored
        logger.warning("could not read the subgraphs of %s", where(tup), exc_info=True)
        return tup
    return _judged(tup, below)


async def awithout_stale_answer(
    saver: BaseCheckpointSaver[Any], tup: CheckpointTuple
) -> CheckpointTuple:
    """The async twin of `without_stale_answer`."""
    try:
        below = await asubgraph_writes(saver, tup)
    except Exception:  # as in `without_stale_answer`
        logger.warning("could not read the subgraphs of %s", where(tup), exc_info=True)
        return tup
    return _judged(tup, below)


def _judged(tup: CheckpointTuple, below: Sequence[Write]) -> CheckpointTuple:
    writes = list(tup.pending_writes or ())
    if stale_answer(writes, below) is None:
        return tup
    if _first_time(tup):
        logger.info("left out a stale answer of %s on load: LangGraph asks again", where(tup))
    record_repairs("load", DROPPED)
    return tup._replace(pending_writes=without_null_answers(writes))


def _first_time(tup: CheckpointTuple) -> bool:
    """Whether this head's stale answer is news to this process: a server reads a head
    many times per request (state, history, the run), and one line says it."""
    configurable = tup.config.get("configurable") or {}
    key = tuple(configurable.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id"))
    if key in _logged:
        _logged.move_to_end(key)
        return False
    _logged[key] = None
    if len(_logged) > REMEMBERED:
        _logged.popitem(last=False)
    return True
