"""Which of a checkpoint's saved writes built its child on a head's chain.

A checkpoint's pending writes are every write made from it, whichever child they
built. Where a thread forked there, some are another branch's, and LangGraph's walk
replays them all into every child (langgraph#8443, #8551; releases before 1.2.19 did
not seal a fork with a snapshot, so their forks were read that way and the wrong value
was committed at the next snapshot). Two kinds of checkpoint say which writes are
theirs:

- a fork one step after its parent is a copy of the parent: a "regenerate" or any run
  from an older checkpoint re-runs the parent's tasks on the fork, whose own writes
  they are; none of the parent's built it;
- an update's writes carry the task id LangGraph derives from the checkpoint it
  updated (a uuid5 of its id and `__interrupt__`): they built the update's checkpoint,
  never a sibling the graph ran or took input into.

Other writes are taken as every child's, as LangGraph takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID, uuid5

UPDATE_TASK = "__interrupt__"
"""The name LangGraph derives an update's task id from (`uuid5(checkpoint id, name)`)."""


def copies_its_parent(source: str | None, step: Any, parent_step: Any) -> bool:
    """A fork one step after its parent: a copy of the parent's value, built by none of
    its writes. (A copy of a sibling, `update_state(..., as_node="__copy__")`, hangs
    from the sibling's parent, two steps on.)"""
    return (
        source == "fork"
        and isinstance(step, int)
        and isinstance(parent_step, int)
        and step == parent_step + 1
    )


def update_task_ids(checkpoint_id: str, count: int) -> set[str]:
    """The task ids of up to `count` updates made on the checkpoint `checkpoint_id`."""
    try:
        base = UUID(checkpoint_id)
    except ValueError:  # an id of another scheme: no update ids derive from it
        return set()
    names = [UPDATE_TASK, *(f"{UPDATE_TASK}:{i}" for i in range(1, count))]
    return {str(uuid5(base, name)) for name in names}


def writes_toward(
    parent_id: str,
    writes: Sequence[Any],
    child_source: str | None,
    child_copies_parent: bool,
) -> list[Any]:
    """The parent's `writes` (`(task, channel, value)`) that built its child on the chain."""
    if child_copies_parent:
        return []
    updates = update_task_ids(parent_id, len(writes))
    if child_source == "update":
        mine = [w for w in writes if str(w[0]) in updates]
        return mine or list(writes)  # an update under a task's own id: not told apart
    return [w for w in writes if str(w[0]) not in updates]
