"""A delta chain cut short, seen through the saver's API alone.

A delta channel's value is rebuilt from the checkpoints back to its last snapshot. A
saver's own prune (langgraph-checkpoint-redis keeps one checkpoint a thread) deletes
them, and LangGraph then rebuilds the channel from nothing. The checkpoints `list()`
hands out carry what the check needs (parent ids, versions, which values are stored),
so a namespace that shows a delta channel is listed once more and judged by the same
rule the drivers use (`retention.keep.cut_channels`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from langgraph.checkpoint.base import CheckpointTuple

from ...codes import FindingCode
from ...decisions.plan import tuple_key
from ...delta.channels import delta_channel_names
from ...retention.keep import StoredCheckpoint, cut_channels, stored_step

Lost = tuple[tuple[FindingCode, str], ...]


def skeleton(tup: CheckpointTuple) -> StoredCheckpoint:
    """What the chain rule reads of a listed checkpoint: no values, only their names."""
    _, ns, checkpoint_id = tuple_key(tup)
    parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    checkpoint = tup.checkpoint
    return StoredCheckpoint(
        ns,
        checkpoint_id,
        parent,
        versions={str(k): str(v) for k, v in (checkpoint.get("channel_versions") or {}).items()},
        holds=frozenset(checkpoint.get("channel_values") or {}),
        delta=frozenset(delta_channel_names(tup)),
        step=stored_step((tup.metadata or {}).get("step")),
    )


def seeds_missing(listed: Iterable[CheckpointTuple], channels: Sequence[str]) -> Lost:
    """`delta_seed_missing` for each selected channel the namespace's head rebuilds from
    a chain whose older checkpoints are gone."""
    return lost_in({row.checkpoint_id: row for row in map(skeleton, listed)}, channels)


def lost_in(namespace: Mapping[str, StoredCheckpoint], channels: Sequence[str]) -> Lost:
    """`delta_seed_missing` for each selected channel the namespace's head rebuilds from
    a chain cut short (`retention.keep.cut_channels`); none for an empty namespace."""
    if not namespace:
        return ()
    cut = cut_channels(namespace)
    return tuple(("delta_seed_missing", name) for name in channels if name in cut)
