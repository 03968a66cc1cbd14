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
from .branches import copies_its_parent, writes_toward
from .chains import MAX_CHAIN
from .channels import (
    as_snapshot,
    channels_to_rebuild,
    delta_channel_names,
    parent_id_of,
    snapshot_value,
    with_values,
)
from .proof import (
    NOT_STORED,
    Divergence,
    Link,
    Proof,
    is_flattened,
    prove,
    same_messages,
    seed_list,
)


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
    """The chain as one channel's proof reads it: each checkpoint with the writes that
    built its child on the chain (`branches.writes_toward`)."""
    copies = [
        _copies_parent(parent, t) for parent, t in zip([None, *chain[:-1]], chain, strict=True)
    ]
    found: list[Link] = []
    for n, t in enumerate(chain):
        checkpoint_id = str(t.config["configurable"]["checkpoint_id"])
        saved = [w for w in t.pending_writes or () if w[1] == channel]
        writes = saved
        if n + 1 < len(chain):
            child = chain[n + 1]
            writes = writes_toward(checkpoint_id, saved, _source(child), copies[n + 1])
        found.append(
            Link(
                checkpoint_id=checkpoint_id,
                stored=(t.checkpoint.get("channel_values") or {}).get(channel, NOT_STORED),
                writes=writes,
                children=children.get(checkpoint_id, 0),
                source=_source(t),
                written_by=_written_by(t),
                copies_parent=copies[n],
                others=[w for w in saved if w not in writes],
            )
        )
    return found


def _source(tup: CheckpointTuple) -> str | None:
    return (tup.metadata or {}).get("source")


def _copies_parent(parent: CheckpointTuple | None, tup: CheckpointTuple) -> bool:
    if parent is None:
        return False
    step, parent_step = (tup.metadata or {}).get("step"), (parent.metadata or {}).get("step")
    return copies_its_parent(_source(tup), step, parent_step)


def _written_by(tup: CheckpointTuple) -> str | None:
    detail = (tup.metadata or {}).get(DETAIL_KEY)
    return detail.get("kind") if isinstance(detail, dict) else None


def proofs(
    tuples: Sequence[CheckpointTuple],
    head_id: str,
    channels: Iterable[str],
    reads: Mapping[str, Any] | None = None,
) -> dict[str, Proof]:
    """Each channel's proof over the head's chain: only channels whose chain holds a
    seed, or forks from the thread's first checkpoint on, have anything to prove.
    `reads`: the head's values as its load rebuilt them, where it stores none
    (`with_head_read`)."""
    chain = chain_of(tuples, head_id)
    children = children_of(tuples)
    from_root = bool(chain) and parent_id_of(chain[0]) is None
    found: dict[str, Proof] = {}
    for channel in channels:
        chained = links(chain, children, channel)
        seeded = any(link.stored is not NOT_STORED for link in chained)
        forked = from_root and any(link.others or link.copies_parent for link in chained)
        if seeded or forked:
            read = (reads or {}).get(channel, NOT_STORED)
            found[channel] = with_head_read(prove(chained), head_id, read)
    return found


def with_head_read(proof: Proof, head_id: str, read: Any) -> Proof:
    """The proof, with the head itself found diverged where its load reads it other than
    proven: the walk replayed another branch's writes (`branches`) that no seed since has
    committed, or the saver's reads of its ancestors miss writes its listing holds."""
    if proof.value is None or proof.divergences or read is NOT_STORED:
        return proof
    held = seed_list(read)
    if held is None or same_messages(held, proof.value):
        return proof
    return Proof(proof.value, (Divergence("delta_value_diverged", head_id, read, proof.value),))


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
    tup: CheckpointTuple,
    channels: Iterable[str] | None,
    seeds: Mapping[str, Any],
    every: bool = False,
) -> list[str]:
    """The selected delta channels of a head whose seeds its rows prove: those whose
    nearest seed (stored at the head, or `seeds`, where the walk from it ended) is
    empty or flattened, or with `every`, each one. An erased history and a flattened
    snapshot are the common ways wrong values were committed; proving any other seed
    costs a whole thread's rows, which a scan of healthy threads does not read unless
    asked (`--prove-history`)."""
    values = tup.checkpoint.get("channel_values") or {}
    delta = delta_channel_names(tup) | set(channels_to_rebuild(tup, None))
    wanted = list(channels) if channels is not None else sorted(delta)
    nearest = {**seeds, **values}
    found = [
        name
        for name in wanted
        if (every and name in delta) or _suspect(nearest.get(name, NOT_STORED), name in delta)
    ]
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
