"""`--compact`: a delta thread kept in at most two checkpoints per namespace.

A delta channel stores nothing at most checkpoints, so a plain prune keeps every
ancestor back to the channel's last snapshot. Compacting writes that snapshot first,
as one new checkpoint placed right under the head: it holds each delta channel's
value at the head (a `_DeltaSnapshot`, as LangGraph writes one), and the head's
parent pointer is moved onto it. The head keeps its id, its values and its pending
writes (an open question, an answer, the results of tasks that ran), so nothing an
application holds goes stale; LangGraph's walk from the head now stops at the
snapshot, and a prune behind it keeps the two. The head's old parent pointer is
archived as a cleared one is, so `undo` puts it back and deletes the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, copy_checkpoint

from ..decisions.ids import id_before
from ..decisions.plan import DETAIL_KEY, NewCheckpoint, carried_metadata, tuple_key
from .keep import StoredCheckpoint, delta_heads, plan_thread

COMPACT_KIND = "compact"
"""The `kind` a compaction's snapshot checkpoint records under `DETAIL_KEY`."""


@dataclass(frozen=True)
class Compaction:
    """One namespace to compact: its head, the head's parent now, the snapshot's id."""

    checkpoint_ns: str
    head_id: str
    parent_id: str
    snapshot_id: str
    channels: frozenset[str]
    """The delta channels the head does not store, which the snapshot will."""


def compactions(rows: Sequence[StoredCheckpoint]) -> list[Compaction]:
    """The namespaces of a thread that a snapshot under the head makes smaller: the head
    rebuilds a delta channel from ancestors, and a plain prune would keep more than two
    checkpoints there (`keep.delta_heads`). A namespace with no room for an id between
    the head and its parent is left to the plain prune."""
    found = []
    for ns, (head, channels) in delta_heads(rows, plan_thread(rows)).items():
        assert head.parent_id is not None
        snapshot_id = id_before(head.checkpoint_id)
        if snapshot_id is None or snapshot_id <= head.parent_id:
            continue
        found.append(Compaction(ns, head.checkpoint_id, head.parent_id, snapshot_id, channels))
    return found


def as_compacted(
    rows: Sequence[StoredCheckpoint], namespaces: Collection[str] | None = None
) -> list[StoredCheckpoint]:
    """The rows as they would be once compacted (a dry run plans on these): each
    compacted head (of `namespaces`, those the run's checks let through; None: all)
    points at a snapshot that holds its delta channels."""
    planned = {
        (c.checkpoint_ns, c.head_id): c
        for c in compactions(rows)
        if namespaces is None or c.checkpoint_ns in namespaces
    }
    compacted: list[StoredCheckpoint] = []
    for row in rows:
        found = planned.get((row.checkpoint_ns, row.checkpoint_id))
        if found is None:
            compacted.append(row)
            continue
        compacted.append(replace(row, parent_id=found.snapshot_id))
        snapshot = StoredCheckpoint(
            row.checkpoint_ns, found.snapshot_id, None, holds=found.channels, step=row.step
        )
        compacted.append(snapshot)
    return compacted


def snapshot_under(
    head: CheckpointTuple,
    compaction: Compaction,
    values: Mapping[str, Any],
    next_version: Callable[[Any, None], Any],
    run_id: str,
) -> NewCheckpoint:
    """The snapshot checkpoint to put under `head`: `values` (each delta channel's value
    at the head, as `_DeltaSnapshot`s) at versions of the saver's own scheme, no parent
    (the head is pointed at it next), and a record of the run that wrote it."""
    checkpoint = copy_checkpoint(head.checkpoint)
    checkpoint["id"] = compaction.snapshot_id
    checkpoint["ts"] = datetime.now(timezone.utc).isoformat()
    current = max(checkpoint["channel_versions"].values(), default=None)
    versions = {}
    for name in sorted(values):
        current = next_version(current, None)
        versions[name] = current
    checkpoint["channel_values"] = dict(values)
    checkpoint["channel_versions"] = dict(versions)
    checkpoint["updated_channels"] = sorted(values)
    thread_id, ns, head_id = tuple_key(head)
    step = head.metadata.get("step")
    detail = {"kind": COMPACT_KIND, "run_id": run_id, "head_checkpoint_id": head_id}
    below = step - 1 if isinstance(step, int) else -1
    metadata = carried_metadata(head.metadata, below, {DETAIL_KEY: detail})
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    return NewCheckpoint(config, checkpoint, metadata, versions)
