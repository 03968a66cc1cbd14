"""A loaded head shown as the release that resumes it reads it: its next work moved off
the nodes the new graph renamed (`renamed_nodes=`), its paused questions under the ids
the running release computes (`interrupt_ids=`), as the batch job writes both. Nothing
is written: a rolling deploy resumes threads paused under the old release before any
batch run."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from langgraph.checkpoint.base import CheckpointTuple

from ..codes import InterruptIds
from ..drift.retarget import retargeted_view
from ..engine import RepairAction
from ..in_flight import INTERRUPT_CHANNEL
from ..interrupt_ids import rekeyed_writes, rekeys
from ..js.rows import is_js_checkpoint
from ..metrics import record_repairs
from .view import where

logger = logging.getLogger("langgraph_checkpoint_repair")

REKEYED = {INTERRUPT_CHANNEL: (RepairAction("interrupt_rekeyed", None, None, -1),)}
"""What a re-keyed load counts as in the metrics: one action on `__interrupt__`."""


def as_released(
    tup: CheckpointTuple | None, renamed: Mapping[str, str], scheme: InterruptIds | None
) -> CheckpointTuple | None:
    """The loaded head re-keyed (`rekeyed_view`), then re-targeted (`retargeted`)."""
    if tup is None:
        return None
    return retargeted(rekeyed_view(tup, scheme), renamed)


def retargeted(tup: CheckpointTuple, renamed: Mapping[str, str]) -> CheckpointTuple:
    """A root head with its work moved off the `renamed` nodes, as `node_renamed` writes
    it. A head whose work cannot move is handed back as loaded, and logged."""
    if not renamed or tup.config["configurable"].get("checkpoint_ns"):
        return tup
    moved = retargeted_view(tup, renamed)
    if isinstance(moved, str):
        logger.warning(
            "thread %r not re-targeted: %s", tup.config["configurable"].get("thread_id"), moved
        )
        return tup
    return moved


def rekeyed_view(tup: CheckpointTuple, scheme: InterruptIds | None) -> CheckpointTuple:
    """`tup` with each paused question whose stored id the release of `scheme` does not
    compute shown with the one it does; the same tuple when there is none (or no
    scheme, or a LangGraph.js thread, whose ids are LangGraph.js's)."""
    if scheme is None or is_js_checkpoint(tup.checkpoint):
        return tup
    moves = rekeys(tup, scheme)
    if not moves:
        return tup
    logger.info("re-keyed %d question(s) of %s on load", len(moves), where(tup))
    record_repairs("load", REKEYED)
    return tup._replace(pending_writes=rekeyed_writes(list(tup.pending_writes or ()), moves))
