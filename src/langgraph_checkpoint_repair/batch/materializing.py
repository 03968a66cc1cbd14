"""`materialize`: each delta channel's whole value written into a new head as a plain
value, the step before a downgrade.

A reader that keeps the key as a plain channel (a release of the graph from before
its delta channels, or a LangGraph without them) reads only what a checkpoint stores,
so on a delta head it reads no messages, and on a snapshot head a `_DeltaSnapshot`
object. LangGraph's `DeltaChannel` takes a plain stored value as its value (the path it
migrates old threads by), so the delta graph reads the head as before and goes on.

The value written is the one LangGraph reads, never a repaired one: a broken history
is `repair`'s to fix, and a seed its rows prove wrong is left for it too.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ..decisions.plan import Assessment, bytes_status, tuple_key
from ..decoding.integrity import Finding
from ..delta import delta_channel_names, is_snapshot, snapshot_value
from ..delta.channels import Rebuilt
from ..delta.proof import Proof
from ..drift.shape import GraphShape
from ..engine import RepairAction
from .compaction import replayed_by_graph

DIVERGED = "its stored seed is not what its rows prove (delta_value_diverged): repair it first"


def names_to_read(stored: CheckpointTuple, channels: Collection[str]) -> list[str]:
    """The channels whose value at the head is read: the run's message channels and
    every channel the head shows to be a delta channel (a deep agent's `files` too)."""
    return sorted(set(channels) | delta_channel_names(stored))


def whole_values(
    stored: CheckpointTuple, loaded: Rebuilt, graph: GraphShape | None
) -> dict[str, Any] | Finding:
    """Each delta channel's value at the head as LangGraph reads it, for the channels
    the head does not store as a plain value already; a finding when one cannot be
    read here (a channel that does not hold messages, without the graph's reducer)."""
    kept = stored.checkpoint["channel_values"]
    read = loaded.tup.checkpoint["channel_values"]
    ns = tuple_key(stored)[1]
    values: dict[str, Any] = {}
    for name in sorted({*delta_channel_names(stored), *loaded.names, *loaded.rest}):
        if name in kept and not is_snapshot(kept[name]):
            continue  # a plain value already: what every reader reads
        if name in loaded.rest:
            value = replayed_by_graph(loaded, name, ns, graph)
            if isinstance(value, str):
                return Finding("not_materialized", name, error=value)
        elif name in read:
            value = read[name]
        else:
            continue  # never written: every reader reads it empty
        values[name] = snapshot_value(value)
    return values


def materialize_assessment(
    stored: CheckpointTuple,
    loaded: Rebuilt,
    proven: Mapping[str, Proof],
    graph: GraphShape | None,
    min_idle: timedelta,
    now: datetime,
) -> Assessment:
    """What `materialize` does with a head: write its delta channels' values as plain
    values (status `repair`, one `materialized` action per channel), or nothing, with
    why where a delta head is left as it was (`not_materialized`)."""
    key = tuple_key(stored)
    if proven:
        found = tuple(Finding("not_materialized", name, error=DIVERGED) for name in proven)
        return Assessment(*key, status="clean", broken=False, findings=found)
    values = whole_values(stored, loaded, graph)
    if isinstance(values, Finding):
        return Assessment(*key, status="clean", broken=False, findings=(values,))
    if not values:
        return Assessment(*key, status="clean", broken=False)
    actions = {name: (materialized(value),) for name, value in values.items()}
    status = bytes_status(stored, min_idle, now)
    return Assessment(*key, status=status, broken=False, actions=actions, repaired=values)


def materialized(value: Any) -> RepairAction:
    """The action recorded for a channel written as a plain value, saying how much."""
    held = type(value).__name__
    if isinstance(value, (list, dict)):
        held = f"{len(value)} {'items' if isinstance(value, list) else 'keys'}"
    return RepairAction("materialized", None, None, 0, f"{held} stored as a plain value")
