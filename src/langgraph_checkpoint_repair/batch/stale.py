"""Stale answers in the batch job: a loaded head's finding (`stale_answers`).

The head's own pending writes decide, except where they cannot tell; then its
subgraphs' writes are read through the saver's listing of the thread. A listing
that fails leaves the head without the finding (the run goes on), unless the
store itself is gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decisions.plan import tuple_key
from ..decoding.integrity import Finding
from ..engine import RepairPolicy
from ..stale_answers import (
    NULL_TASK_ID,
    RESUME_CHANNEL,
    Write,
    asks_a_human,
    asubgraph_writes,
    null_answer,
    stale_answer,
    subgraph_writes,
)
from ..stores.base import AsyncThreadStore, ThreadStore
from ..stores.faults import store_lost

STALE = "an answer its task already took; the next invoke(None) hands it to the open question"
STALE_FOUND = (Finding("stale_resume", RESUME_CHANNEL, NULL_TASK_ID, error=STALE),)
"""The findings of a head holding a stale answer."""


def stale_findings(stored: CheckpointTuple, below: Sequence[Write]) -> tuple[Finding, ...]:
    """The `stale_resume` finding where the head holds a stale answer; none otherwise."""
    if stale_answer(list(stored.pending_writes or ()), below) is None:
        return ()
    return STALE_FOUND


def stale_found(store: ThreadStore, stored: CheckpointTuple) -> tuple[Finding, ...]:
    """The head's `stale_resume` finding: judged on its pending writes, its subgraphs'
    where those cannot tell, and the store's order of rows where it keeps one (an
    answer stored after any task took one is new, however equal: SQLite)."""
    found = stale_findings(stored, below_head(store.saver, stored))
    if found and store.answer_is_new(tuple_key(stored)):
        return ()
    return found


async def astale_found(store: AsyncThreadStore, stored: CheckpointTuple) -> tuple[Finding, ...]:
    """The async twin of `stale_found`."""
    found = stale_findings(stored, await abelow_head(store.saver, stored))
    if found and await store.answer_is_new(tuple_key(stored)):
        return ()
    return found


def may_drop_answer(stored: CheckpointTuple, policy: RepairPolicy) -> bool:
    """Whether the head may hold a stale answer the run deletes: a null-task answer
    beside an open question, with `stale_resume="drop"` (the default)."""
    writes = list(stored.pending_writes or ())
    return (
        policy.stale_resume == "drop" and asks_a_human(writes) and null_answer(writes) is not None
    )


def below_head(saver: BaseCheckpointSaver[Any], stored: CheckpointTuple) -> list[Write]:
    """The head's subgraphs' writes, where the rule needs them (`subgraph_writes`)."""
    try:
        return subgraph_writes(saver, stored)
    except Exception as error:
        if store_lost(error):
            raise
        return []


async def abelow_head(saver: BaseCheckpointSaver[Any], stored: CheckpointTuple) -> list[Write]:
    """The async twin of `below_head`."""
    try:
        return await asubgraph_writes(saver, stored)
    except Exception as error:
        if store_lost(error):
            raise
        return []
