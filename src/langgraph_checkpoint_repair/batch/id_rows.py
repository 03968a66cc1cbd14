"""Where `message_id_missing` is repaired: in the stored writes of each such channel that
LangGraph replays to rebuild the head (`decisions.id_stamps`; read only for a head with
the finding, on a store that rewrites writes in place), or, where no write holds the
messages, in a snapshot the head's repair stores (`decisions.plan.assess`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ..decisions.id_stamps import ChainRow
from ..decisions.plan import Assessment, tuple_key
from ..delta.channels import Rebuilt
from ..delta.lineage import namespace_config, replayed_since_seed
from ..delta.message_ids import seeds_without_ids


def given_ids(
    store: Any, stored: CheckpointTuple, loaded: Rebuilt, channels: Collection[str]
) -> Collection[str]:
    """The channels whose messages without an id the head's repair gives ids in a
    snapshot: those whose stored seed lacks them (no write holds them), and on a store
    that cannot rewrite its writes in place, every one."""
    return seeds_without_ids(stored, loaded) if store.rewrites_writes else channels


def stamping(store: Any, assessment: Assessment) -> list[str]:
    """The channels whose writes the run stamps: those found without ids, where the
    store can rewrite its writes in place (elsewhere the finding is reported), but for
    those the head's repair gives ids in a snapshot (their seeds lack them)."""
    if not store.rewrites_writes:
        return []
    found = {f.channel for f in assessment.findings if f.code == "message_id_missing"}
    return sorted(found - set(assessment.repaired))  # those a snapshot gives ids


def _wanted(
    listed: Sequence[CheckpointTuple], stored: CheckpointTuple, names: Sequence[str]
) -> list[tuple[str, str]]:
    """(checkpoint id, channel) of each write row to read, oldest first."""
    head_id = tuple_key(stored)[2]
    return [(cid, name) for name in names for cid in replayed_since_seed(listed, head_id, name)]


def chain_rows(store: Any, stored: CheckpointTuple, names: Sequence[str]) -> list[ChainRow]:
    """The stored writes of `names` replayed to rebuild the head, with their checkpoints."""
    if not names:
        return []
    thread_id, ns, _ = tuple_key(stored)
    listed = list(store.saver.list(namespace_config(stored)))
    rows: list[ChainRow] = []
    for cid, name in _wanted(listed, stored, names):
        values = store.stored_values((thread_id, ns, cid)) or ()
        rows += [(cid, v) for v in values if v.channel == name and v.task_id is not None]
    return rows


async def achain_rows(store: Any, stored: CheckpointTuple, names: Sequence[str]) -> list[ChainRow]:
    """The async twin of `chain_rows`."""
    if not names:
        return []
    thread_id, ns, _ = tuple_key(stored)
    listed = [t async for t in store.saver.alist(namespace_config(stored))]
    rows: list[ChainRow] = []
    for cid, name in _wanted(listed, stored, names):
        values = await store.stored_values((thread_id, ns, cid)) or ()
        rows += [(cid, v) for v in values if v.channel == name and v.task_id is not None]
    return rows
