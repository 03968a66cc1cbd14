"""The newest ancestor an unreadable head can be rewound to (`--rewind-unreadable`):
thin sync and async I/O shells over the pure walk in `decisions.rewind`.

An ancestor qualifies when it decodes entirely: the saver loads it (its checkpoint,
channel values and pending writes) without error, and its stored values hold no
`undecodable` finding. One whose read refused a type, or met a lost one, ends the
walk: its values would be written back as plain data."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..decisions.rewind import AncestorWalk, Rung
from ..decisions.stored_bytes import findings_of, unreadable
from ..decoding.integrity import StoredValue
from ..decoding.strict import refusals
from ..stores import AsyncThreadStore, Head, ThreadStore
from ..stores.faults import store_lost
from ..stores.history import aload_rebuilt, load_rebuilt

HeadKey = tuple[str, str, str]
Loaded = tuple[CheckpointTuple, list[str]]
"""An ancestor as loaded, delta channels rebuilt, and the names of those rebuilt."""
UNREADABLE, REFUSED = "unreadable", "refused_type"


def _failed_load(
    key: HeadKey,
    values: Sequence[StoredValue] | None,
    error: Exception,
    serde: SerializerProtocol,
    nul_matters: bool,
) -> str:
    """An ancestor whose load failed on its bytes is passed over; any other failure
    (the store's, ours) is the run's to report."""
    if unreadable(key, values, error, serde, nul_matters) is None:
        raise error
    return UNREADABLE


def _verdict(
    values: Sequence[StoredValue] | None,
    refused: set[str],
    serde: SerializerProtocol,
    nul_matters: bool,
) -> str | None:
    """None for an ancestor that decodes entirely; otherwise why it cannot be used."""
    codes = {finding.code for finding in findings_of(values, refused, serde, nul_matters)}
    if "undecodable" in codes:
        return UNREADABLE
    return REFUSED if refused or "lost_type" in codes else None


def _key(ancestor_id: str, head: HeadKey) -> HeadKey:
    return (head[0], head[1], ancestor_id)


def _start(rung: Rung | None, head: HeadKey) -> AncestorWalk:
    return AncestorWalk(rung or Rung(head[2], None, None))


def _step(walk: AncestorWalk, verdict: str, rung: Rung | None) -> None:
    """Walk on past an unusable ancestor, or end the walk at a refused one."""
    if verdict == REFUSED:
        walk.left_alone(REFUSED)
    else:
        walk.unreadable(rung)


def walk_to_readable(
    store: ThreadStore, head: HeadKey, channels: Sequence[str]
) -> tuple[AncestorWalk, Loaded | None]:
    """The walk from `head` and the newest ancestor that decodes entirely, if any."""
    walk = _start(store.chain_link(head), head)
    while (ancestor_id := walk.next_id()) is not None:
        key = _key(ancestor_id, head)
        found = _load(store, key, channels)
        if not isinstance(found, str):
            return walk, found
        _step(walk, found, store.chain_link(key) if found == UNREADABLE else None)
    return walk, None


def _load(store: ThreadStore, key: HeadKey, channels: Sequence[str]) -> Loaded | str:
    serde, nul_matters = store.saver.serde, store.nul_matters
    with refusals() as refused:
        try:
            stored = store.saver.get_tuple(Head(*key).config)
            loaded = None if stored is None else load_rebuilt(store.saver, stored, channels)
        except Exception as error:
            if store_lost(error):
                raise
            return _failed_load(key, store.stored_values(key), error, serde, nul_matters)
    if loaded is None:
        return UNREADABLE  # the row is gone: its chain link says so
    verdict = _verdict(store.stored_values(key), refused, serde, nul_matters)
    return loaded if verdict is None else verdict


async def awalk_to_readable(
    store: AsyncThreadStore, head: HeadKey, channels: Sequence[str]
) -> tuple[AncestorWalk, Loaded | None]:
    """The async twin of `walk_to_readable`."""
    walk = _start(await store.chain_link(head), head)
    while (ancestor_id := walk.next_id()) is not None:
        key = _key(ancestor_id, head)
        found = await _aload(store, key, channels)
        if not isinstance(found, str):
            return walk, found
        _step(walk, found, await store.chain_link(key) if found == UNREADABLE else None)
    return walk, None


async def _aload(store: AsyncThreadStore, key: HeadKey, channels: Sequence[str]) -> Loaded | str:
    serde, nul_matters = store.saver.serde, store.nul_matters
    with refusals() as refused:
        try:
            stored = await store.saver.aget_tuple(Head(*key).config)
            loaded = None if stored is None else await aload_rebuilt(store.saver, stored, channels)
        except Exception as error:
            if store_lost(error):
                raise
            values = await store.stored_values(key)
            return _failed_load(key, values, error, serde, nul_matters)
    if loaded is None:
        return UNREADABLE
    verdict = _verdict(await store.stored_values(key), refused, serde, nul_matters)
    return loaded if verdict is None else verdict
