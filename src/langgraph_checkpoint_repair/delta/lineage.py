"""A head's chain of checkpoints, from a listing of its namespace, as `proof` walks it.

The chain is followed by `parent_checkpoint_id` from the head, each parent older than
its child (`chains`): a chain that breaks the order, or whose parent is gone, proves
nothing past that point, so the walk starts there, as LangGraph's would end there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple

from ..codes import DETAIL_KEY
from ..compatibility import features
from .chains import MAX_CHAIN
from .channels import (
    as_snapshot,
    channels_to_rebuild,
    delta_channel_names,
    parent_id_of,
    snapshot_value,
    with_values,
)
from .proof import NOT_STORED, Link, Proof, is_flattened, prove


def chain_of(tuples: Iterable[CheckpointTuple], head_id: str) -> list[CheckpointTuple]:
    """The head's ancestors and the head, oldest first; empty when the head is not listed."""
    listed = list(tuples)
    by_id = {str(t.config["configurable"]["checkpoint_id"]): t for t in listed}
    chain: list[CheckpointTuple] = []
    current = by_id.get(head_id)
    while current is not None and len(chain) < MAX_CHAIN:
        chain.append(current)
        child_id = str(current.config["configurable"]["checkpoint_id"])
        parent = parent_id_of(current)
        current = by_id.get(parent) if parent is not None and parent < child_id else None
    chain.reverse()
    return chain


def children_of(tuples: Iterable[CheckpointTuple]) -> Counter[str]:
    """How many checkpoints name each checkpoint as their parent."""
    return Counter(p for t in tuples if (p := parent_id_of(t)) is not None)


def links(
    chain: Sequence[CheckpointTuple], children: Mapping[str, int], channel: str
) -> list[Link]:
    """The chain as one channel's proof reads it."""
    return [
        Link(
            checkpoint_id=str(t.config["configurable"]["checkpoint_id"]),
            stored=(t.checkpoint.get("channel_values") or {}).get(channel, NOT_STORED),
            writes=[w for w in t.pending_writes or () if w[1] == channel],
            children=children.get(str(t.config["configurable"]["checkpoint_id"]), 0),
            source=(t.metadata or {}).get("source"),
            written_by=_written_by(t),
        )
        for t in chain
    ]


def _written_by(tup: CheckpointTuple) -> str | None:
    detail = (tup.metadata or {}).get(DETAIL_KEY)
    return detail.get("kind") if isinstance(detail, dict) else None


def proofs(
    tuples: Sequence[CheckpointTuple], head_id: str, channels: Iterable[str]
) -> dict[str, Proof]:
    """Each channel's proof over the head's chain: only channels whose chain holds a
    seed after its first checkpoint have anything to prove."""
    chain = chain_of(tuples, head_id)
    children = children_of(tuples)
    found: dict[str, Proof] = {}
    for channel in channels:
        chained = links(chain, children, channel)
        if any(link.stored is not NOT_STORED for link in chained):
            found[channel] = prove(chained)
    return found


def namespace_config(tup: CheckpointTuple) -> RunnableConfig:
    """The listing config of the head's (thread, namespace)."""
    configurable = tup.config["configurable"]
    return {
        "configurable": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        }
    }


def to_prove(
    tup: CheckpointTuple, channels: Iterable[str] | None, seeds: Mapping[str, Any]
) -> list[str]:
    """The selected delta channels of a head whose seeds its rows prove: those whose
    nearest seed (stored at the head, or `seeds`, where the walk from it ended) is
    empty or flattened. An erased history and a flattened snapshot are how wrong values
    were committed; proving any other seed costs a whole thread's rows, which a scan of
    healthy threads does not read."""
    values = tup.checkpoint.get("channel_values") or {}
    delta = delta_channel_names(tup) | set(channels_to_rebuild(tup, None))
    wanted = list(channels) if channels is not None else sorted(delta)
    nearest = {**seeds, **values}
    found = [name for name in wanted if _suspect(nearest.get(name, NOT_STORED), name in delta)]
    # Without delta channels in LangGraph, a list of lists is the application's own.
    return found if found and features.has_delta_channels() else []


def _suspect(stored: Any, of_delta_channel: bool) -> bool:
    """A flattened seed, or an empty one of a delta channel (`to_prove`)."""
    value = snapshot_value(stored)
    return is_flattened(value) or (of_delta_channel and value == [])


def with_proven(
    tup: CheckpointTuple, names: list[str], found: Mapping[str, Proof]
) -> tuple[CheckpointTuple, list[str]]:
    """The loaded tuple with each channel in `found` holding its proven value (as a
    `_DeltaSnapshot`, so it is handed on as a plain list), and the names so held."""
    proven = {name: as_snapshot(proof.value) for name, proof in found.items()}
    if not proven:
        return tup, names
    return with_values(tup, proven), [*names, *(n for n in proven if n not in names)]


def replayed_since_seed(tuples: Iterable[CheckpointTuple], head_id: str, channel: str) -> list[str]:
    """The checkpoints whose saved writes LangGraph replays to rebuild `channel` at the
    head: its nearest ancestor storing a value (the seed) to the head's parent, oldest
    first; every ancestor when none stores one."""
    replayed: list[str] = []
    for tup in reversed(chain_of(tuples, head_id)[:-1]):
        replayed.append(str(tup.config["configurable"]["checkpoint_id"]))
        if channel in (tup.checkpoint.get("channel_values") or {}):
            break
    return replayed[::-1]
