"""Read "work is scheduled" off a checkpoint tuple.

When a checkpoint has work scheduled, the unanswered calls of its last AI
message may be about to run (an interrupted thread executes them on resume),
so they must be left alone. The signals, as LangGraph itself uses them:

- a `branch:to:<node>` channel that holds a value and is newer than what
  `versions_seen[<node>]` records (a node is triggered and has not run yet);
- pending sends (`Send` packets waiting in the tasks channel);
- an interrupt among the pending writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import Checkpoint, CheckpointTuple

BRANCH_PREFIX = "branch:to:"
TASKS_CHANNEL = "__pregel_tasks"
INTERRUPT_CHANNEL = "__interrupt__"
ERROR_CHANNEL = "__error__"


def work_is_scheduled(tup: CheckpointTuple) -> bool:
    """True when resuming this checkpoint would run something."""
    checkpoint = tup.checkpoint
    return (
        has_triggered_node(checkpoint)
        or has_pending_sends(checkpoint)
        or has_interrupt(tup.pending_writes or ())
    )


def has_triggered_node(checkpoint: Checkpoint) -> bool:
    values: Mapping[str, Any] = checkpoint.get("channel_values") or {}
    versions: Mapping[str, Any] = checkpoint.get("channel_versions") or {}
    seen_by_node: Mapping[str, Mapping[str, Any]] = checkpoint.get("versions_seen") or {}
    for channel, version in versions.items():
        if not channel.startswith(BRANCH_PREFIX) or channel not in values:
            continue
        seen = seen_by_node.get(channel[len(BRANCH_PREFIX) :], {})
        previous = seen.get(channel)
        if previous is None or _newer(version, previous):
            return True
    return False


def _newer(version: Any, previous: Any) -> bool:
    try:
        return bool(version > previous)
    except TypeError:  # mixed version types: be safe, assume scheduled
        return True


def has_pending_sends(checkpoint: Checkpoint) -> bool:
    legacy: Any = checkpoint.get("pending_sends")
    return bool(legacy) or bool(checkpoint.get("channel_values", {}).get(TASKS_CHANNEL))


def has_legacy_sends(checkpoint: Checkpoint) -> bool:
    """Sends of a checkpoint stored before format 4: LangGraph rebuilds them from its
    parent's `__pregel_tasks` writes on every load, so a checkpoint written on top of it
    (whose parent those writes are not on) would lose them."""
    try:
        legacy = int(checkpoint.get("v", 4)) < 4
    except (TypeError, ValueError):
        legacy = True  # a version we cannot read: be safe
    return legacy and has_pending_sends(checkpoint)


def has_interrupt(pending_writes: Sequence[Any]) -> bool:
    return any(write[1] == INTERRUPT_CHANNEL for write in pending_writes)


def has_pending_results(pending_writes: Sequence[Any]) -> bool:
    """True when the checkpoint holds writes a resume would use (interrupts, resume
    values, results of tasks that finished), which a checkpoint written on top of it
    would leave behind. A failed task's error write is not such a result."""
    return any(write[1] != ERROR_CHANNEL for write in pending_writes)
