"""The checkpoints the batch job appends for a deploy that changed the graph: the
re-targeting of a head (`node_renamed`, `channel_dropped`) and its undo. Pure.

The undo moves the work back the same way (NEW to OLD, each task re-keyed again) and
puts each dropped channel back as the repair's source held it, so the old graph
resumes the thread as before the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import Checkpoint, CheckpointTuple

from ..codes import DRIFT_CODES
from ..decisions.plan import DETAIL_KEY, NewCheckpoint, checkpoint_on_top
from ..decoding.integrity import Finding
from ..engine.actions import RepairAction
from ..stale_answers import NULL_TASK_ID
from ..waiting import json_value
from .findings import graph_at
from .retarget import NextVersion, Retargeted, Triggers, branch_triggers, retarget
from .shape import GraphShape

DriftFix = tuple[dict[str, str], list[str]]
"""The renames (OLD to NEW) and the channels to drop that answer a head's findings."""
RETARGET_KEY = "retarget"
"""The key of a repair's detail that says what moved: `renamed` and `dropped`."""


def drift_fix(
    findings: Sequence[Finding], renames: Mapping[str, str], checkpoint_ns: str
) -> DriftFix | None:
    """The renames and drops that answer every drift finding of a head; None when one
    has no answer (a missing node the operator did not map, a subgraph's namespace)."""
    missing = {f.node for f in findings if f.code == "node_missing"}
    drops = [f.channel for f in findings if f.code == "channel_missing"]
    if not missing and not drops:
        return None
    if missing and (checkpoint_ns or not missing <= set(renames)):
        return None
    return {old: renames[old] for old in missing if old is not None}, drops


def not_moved(findings: Sequence[Finding], why: str) -> tuple[Finding, ...]:
    """The findings of a head whose work the renames could not move, each saying why."""
    return tuple(
        replace(f, error=f"{f.error}; not moved: {why}") if f.code in DRIFT_CODES else f
        for f in findings
    )


def node_triggers(graph: GraphShape | None, checkpoint_ns: str) -> Triggers:
    """The triggers LangGraph hashes for a node of the graph that runs `checkpoint_ns`
    (a subgraph's, for a subgraph's head); a node it does not know, its branch channel."""
    found = None if graph is None else graph_at(graph, checkpoint_ns)
    if not isinstance(found, GraphShape):
        return branch_triggers
    return lambda node: found.triggers(node) or branch_triggers(node)


def retarget_on_top(
    head: CheckpointTuple,
    fix: DriftFix,
    triggers: Triggers,
    next_version: NextVersion,
    detail: Mapping[str, Any],
    run_id: str,
    drop_answer: bool = False,
) -> tuple[NewCheckpoint, tuple[RepairAction, ...]] | str:
    """A checkpoint on top of `head` with its work moved (`drift_fix`), and what moved;
    a sentence saying why not where a pending write cannot follow. With `drop_answer`,
    the head's stale answer is left behind (its undo puts it back from the head)."""
    renames, drops = fix
    dropped = {name: json_value(head.checkpoint["channel_values"].get(name)) for name in drops}
    on_top = checkpoint_on_top(head, {}, next_version, detail, run_id)
    moved = _moved(head, on_top, renames, drops, triggers, next_version, drop_answer)
    if isinstance(moved, str):
        return moved
    new, retargeted = moved
    new.metadata[DETAIL_KEY] = {
        **new.metadata[DETAIL_KEY],
        RETARGET_KEY: {"renamed": renames, "dropped": dropped},
    }
    return new, retargeted.actions


def _moved(
    head: CheckpointTuple,
    on_top: NewCheckpoint,
    renames: Mapping[str, str],
    drops: list[str],
    triggers: Triggers,
    next_version: NextVersion,
    drop_answer: bool = False,
) -> tuple[NewCheckpoint, Retargeted] | str:
    """`on_top` (a copy of `head` appended on it) with the head's work moved."""
    moved = retarget(
        head,
        on_top.checkpoint,
        on_top.metadata["step"],
        renames=renames,
        drops=drops,
        triggers=triggers,
        next_version=next_version,
        drop_answer=drop_answer,
    )
    if isinstance(moved, str):
        return moved
    return replace(on_top, new_versions=moved.new_versions, writes=moved.writes), moved


def undo_retarget(
    repair: CheckpointTuple,
    source: CheckpointTuple,
    next_version: NextVersion,
    detail: Mapping[str, Any],
    run_id: str,
) -> NewCheckpoint | str:
    """A checkpoint on top of the run's `repair` that moves its work back to the old
    names and restores the channels it dropped from `source`, as they were there."""
    metadata: Mapping[str, Any] = repair.metadata
    done: dict[str, Any] = metadata[DETAIL_KEY][RETARGET_KEY]
    back = {new: old for old, new in done["renamed"].items()}
    on_top = checkpoint_on_top(repair, {}, next_version, detail, run_id)
    moved = _moved(repair, on_top, back, [], branch_triggers, next_version)
    if isinstance(moved, str):
        return moved
    new, _ = moved
    versions = dict(new.new_versions)
    for name in done["dropped"]:
        _put_back(name, source.checkpoint, new.checkpoint, versions)
    carried = {(task, channel) for task, channel, _ in new.writes}
    answers = [  # what the repair left behind of the null task's (a stale answer)
        write
        for write in source.pending_writes or ()
        if write[0] == NULL_TASK_ID and (write[0], write[1]) not in carried
    ]
    return replace(new, new_versions=versions, writes=(*new.writes, *answers))


def _put_back(
    channel: str, stored: Checkpoint, restored: Checkpoint, versions: dict[str, Any]
) -> None:
    """A channel the repair dropped, as the source held it: value, version, seen."""
    if channel in stored["channel_versions"]:
        versions[channel] = stored["channel_versions"][channel]
        restored["channel_versions"][channel] = versions[channel]
    if channel in stored["channel_values"]:
        restored["channel_values"][channel] = stored["channel_values"][channel]
    for node, seen in stored["versions_seen"].items():
        if channel in seen:
            restored["versions_seen"].setdefault(node, {})[channel] = seen[channel]


def is_retarget(metadata: Mapping[str, Any]) -> bool:
    """Whether a repair checkpoint (by its metadata) re-targeted its head."""
    detail = metadata.get(DETAIL_KEY)
    return isinstance(detail, Mapping) and isinstance(detail.get(RETARGET_KEY), Mapping)


def moved_back(
    repair: CheckpointTuple,
    source: CheckpointTuple,
    next_version: NextVersion,
    detail: Mapping[str, Any],
    run_id: str,
) -> NewCheckpoint | str | None:
    """`undo_retarget` for a repair that re-targeted its head; None for any other."""
    if not is_retarget(repair.metadata):
        return None
    return undo_retarget(repair, source, next_version, detail, run_id)
