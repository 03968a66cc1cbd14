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

from langgraph.checkpoint.base import CheckpointTuple

from ..decisions.plan import DETAIL_KEY, NewCheckpoint, checkpoint_on_top
from ..decoding.integrity import Finding
from ..engine.actions import RepairAction
from ..waiting import json_value
from .retarget import NextVersion, Triggers, branch_triggers, retarget

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


def retarget_on_top(
    head: CheckpointTuple,
    fix: DriftFix,
    triggers: Triggers,
    next_version: NextVersion,
    detail: Mapping[str, Any],
    run_id: str,
) -> tuple[NewCheckpoint, tuple[RepairAction, ...]] | str:
    """A checkpoint on top of `head` with its work moved (`drift_fix`), and what moved;
    a sentence saying why not where a pending write cannot follow."""
    renames, drops = fix
    new = checkpoint_on_top(head, {}, next_version, detail, run_id)
    dropped = {name: json_value(head.checkpoint["channel_values"].get(name)) for name in drops}
    moved = retarget(
        head,
        new.checkpoint,
        new.metadata["step"],
        renames=renames,
        drops=drops,
        triggers=triggers,
        next_version=next_version,
    )
    if isinstance(moved, str):
        return moved
    new.metadata[DETAIL_KEY] = {
        **new.metadata[DETAIL_KEY],
        RETARGET_KEY: {"renamed": renames, "dropped": dropped},
    }
    return replace(new, new_versions=moved.new_versions, writes=moved.writes), moved.actions


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
    new = checkpoint_on_top(repair, {}, next_version, detail, run_id)
    moved = retarget(
        repair,
        new.checkpoint,
        new.metadata["step"],
        renames=back,
        triggers=branch_triggers,
        next_version=next_version,
    )
    if isinstance(moved, str):
        return moved
    versions = dict(moved.new_versions)
    stored = source.checkpoint
    for name in done["dropped"]:
        if name in stored["channel_versions"]:
            new.checkpoint["channel_versions"][name] = versions[name] = stored["channel_versions"][
                name
            ]
        if name in stored["channel_values"]:
            new.checkpoint["channel_values"][name] = stored["channel_values"][name]
        for node, seen in stored["versions_seen"].items():
            if name in seen:
                new.checkpoint["versions_seen"].setdefault(node, {})[name] = seen[name]
    return replace(new, new_versions=versions, writes=moved.writes)


def is_retarget(metadata: Mapping[str, Any]) -> bool:
    """Whether a repair checkpoint (by its metadata) re-targeted its head."""
    detail = metadata.get(DETAIL_KEY)
    return isinstance(detail, Mapping) and isinstance(detail.get(RETARGET_KEY), Mapping)
