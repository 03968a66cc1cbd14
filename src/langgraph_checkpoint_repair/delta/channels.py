"""Delta message channels: rebuild them as LangGraph does, and snapshot repaired ones.

A `DeltaChannel` (deepagents' `messages`, for one) stores no value in most
checkpoints. LangGraph rebuilds it from the nearest stored seed (a
`_DeltaSnapshot` or a plain value) by replaying the writes of the ancestors
through the channel's reducer. To repair such a channel we rebuild the same
list, with LangGraph's own channel and reducer; to persist a repair we store
the whole list as a `_DeltaSnapshot`, which stops every later walk there.

Which channels are delta channels is read off the checkpoint: a stored
`_DeltaSnapshot` says so, and so does the channel's entry in the metadata's
`counters_since_delta_snapshot` (LangGraph counts updates there for every delta
channel until its next snapshot). Named channels with a version and nothing
stored are rebuilt too, as LangGraph would.

Delta channels ship with langgraph 1.2: on an older LangGraph no checkpoint
holds one, so nothing here is rebuilt and every question answers "no".
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple

from ..compatibility import features

if TYPE_CHECKING:
    from langgraph.checkpoint.base import DeltaChannelHistory
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

logger = logging.getLogger("langgraph_checkpoint_repair")

COUNTERS_KEY = "counters_since_delta_snapshot"
"""Checkpoint metadata: delta channel -> (updates, supersteps) since its last snapshot."""

_message_id = attrgetter("id")
MESSAGE_TYPES = frozenset({"human", "ai", "tool", "system", "function", "remove", "chat"})


def snapshot_value(value: Any) -> Any:
    """The list inside a `_DeltaSnapshot`; any other value as it is."""
    return value.value if is_snapshot(value) else value


def is_snapshot(value: Any) -> bool:
    snapshot = features.DELTA_SNAPSHOT
    return snapshot is not None and isinstance(value, snapshot) and features.has_delta_channels()


def as_snapshot(value: Any) -> _DeltaSnapshot:
    return features._DeltaSnapshot(value)


def _counted(tup: CheckpointTuple) -> Collection[str]:
    """The channels whose updates since their last snapshot the metadata counts."""
    counters: Any = (tup.metadata or {}).get(COUNTERS_KEY) or {}
    if not isinstance(counters, dict) or not counters:
        return {}
    return counters if features.has_delta_channels() else {}


def delta_channel_names(tup: CheckpointTuple) -> set[str]:
    """The channels this checkpoint shows to be delta channels: snapshotted or counted."""
    values = tup.checkpoint.get("channel_values") or {}
    return {name for name, value in values.items() if is_snapshot(value)} | set(_counted(tup))


def channels_to_rebuild(tup: CheckpointTuple, names: Collection[str] | None) -> list[str]:
    """The delta channels LangGraph would rebuild by walking this checkpoint's ancestors.

    A channel needs the walk when it has a version and nothing stored here. It is
    known as a delta channel when it is named (`names`), or, by default, when the
    metadata counts its updates since the last snapshot. Without delta channels
    in LangGraph, none.
    """
    checkpoint = tup.checkpoint
    values = checkpoint.get("channel_values") or {}
    versions = checkpoint.get("channel_versions") or {}
    candidates = names if names is not None else _counted(tup)
    found = [name for name in candidates if name in versions and name not in values]
    return found if found and features.has_delta_channels() else []


def messages_reducer(state: Sequence[Any] | None, writes: Sequence[Any]) -> list[BaseMessage]:
    """LangGraph's batch message reducer, honouring `REMOVE_ALL_MESSAGES`.

    LangGraph's experimental `_messages_delta_reducer` ignores the sentinel in
    some releases; deepagents' reducer (and `add_messages`) clear everything
    before it. Both agree on every other write, so the sentinel is applied
    first, then LangGraph's reducer does the rest.
    """
    flat: list[Any] = []
    for write in writes:
        if isinstance(write, list):
            flat.extend(write)
        else:
            flat.append(write)
    cut = _last_remove_all(flat)
    if cut is not None:
        state, flat = [], flat[cut + 1 :]
    base = state if isinstance(state, list) else list(state or [])  # it copies, not edits
    reduced: list[Any] = _parts().messages_reducer(base, [flat])
    return reduced


def _last_remove_all(items: Sequence[Any]) -> int | None:
    """Where the last `REMOVE_ALL_MESSAGES` sentinel is, as a message or a message dict.
    Most writes hold neither a `RemoveMessage` nor a dict: their classes tell at once."""
    if _classes_are_plain_messages(items):
        return None
    found, marker = None, _parts().remove_all
    for index, item in enumerate(items):
        if _is_remove_all(item, marker):
            found = index
    return found


def _classes_are_plain_messages(items: Sequence[Any]) -> bool:
    """True when every item is a message other than a `RemoveMessage`, read off the
    set of their classes (one C-level pass) rather than item by item."""
    return all(_is_plain_message_class(cls) for cls in set(map(type, items)))


def _is_plain_message_class(cls: type) -> bool:
    return issubclass(cls, BaseMessage) and not issubclass(cls, RemoveMessage)


def _is_remove_all(item: Any, marker: str) -> bool:
    """`marker`: LangGraph's `REMOVE_ALL_MESSAGES`."""
    if isinstance(item, RemoveMessage):
        return item.id == marker
    return isinstance(item, dict) and item.get("type") == "remove" and item.get("id") == marker


def _parts() -> features.DeltaParts:
    """LangGraph's delta channel pieces, on a path that only a delta channel opens."""
    parts = features.delta_parts()
    if parts is None:  # pragma: no cover - every caller checked has_delta_channels first
        raise RuntimeError("delta channels need langgraph 1.2 and langgraph-checkpoint 4")
    return parts


def rebuild_messages(history: DeltaChannelHistory) -> list[BaseMessage] | None:
    """The channel's value as LangGraph rebuilds it, or None when it does not hold messages.

    LangGraph's own `DeltaChannel` does the replay (`Overwrite` included).
    """
    seed: Any = history.get("seed", [])
    stored = snapshot_value(seed)
    writes = history.get("writes") or []
    values = [write[2] for write in writes]
    typed_state = type(stored) is list and _holds_message_classes(stored)
    if typed_state and all(type(value) is list for value in values):
        appended = appended_messages(stored, values)
        if appended is not None:
            return appended
    if not typed_state and not _holds_message_likes(stored):
        return None
    typed = typed_state and _all_typed_writes(values)
    if not typed and not all(_is_message_write(value) for value in values):
        return None
    channel: Any = _parts().channel(messages_reducer).from_checkpoint(seed)
    channel.replay_writes(writes)
    value = channel.value
    if typed or _holds_messages(value):  # messages in, messages out
        return cast(list[BaseMessage], value)
    return None


def appended_messages(state: list[BaseMessage], writes: list[Any]) -> list[BaseMessage] | None:
    """`state` then every message written, when that is all LangGraph's reducer would
    do with these writes: lists of messages, none a `RemoveMessage`, each written id
    given once and new to `state`. Otherwise None, and the reducer replays them.

    The usual delta history is only appended to; this says so by sets of ids and of
    classes, without the reducer's message-by-message pass.
    """
    added = list(itertools.chain.from_iterable(writes))
    if not _classes_are_plain_messages(added):
        return None
    ids = set(map(_message_id, added))
    if len(ids) != len(added) or None in ids or not ids.isdisjoint(map(_message_id, state)):
        return None
    return [*state, *added]


def _all_typed_writes(values: list[Any]) -> bool:
    """True when every write is a list of messages (the usual case), told at once by
    the classes of their items; other shapes are looked at write by write."""
    if not all(type(value) is list for value in values):
        return False
    return _holds_message_classes(itertools.chain.from_iterable(values))


def _is_message_write(value: Any) -> bool:
    is_overwrite, overwritten = _parts().get_overwrite(value)
    if is_overwrite:
        return overwritten is None or _holds_message_likes(overwritten)
    if isinstance(value, (list, tuple)) and not is_message_like(value):
        return _holds_message_likes(value)
    return is_message_like(value)


def _holds_message_likes(value: Any) -> bool:
    if not isinstance(value, (list, tuple)):
        return False
    return _holds_message_classes(value) or all(is_message_like(item) for item in value)


def _holds_message_classes(items: Iterable[Any]) -> bool:
    """True when every item is a message, read off the set of their classes: a long
    history costs one C-level pass instead of a Python call per message."""
    return all(issubclass(cls, BaseMessage) for cls in set(map(type, items)))


def is_message_like(item: Any) -> bool:
    """A message, or what LangGraph turns into one (a message dict, a string, (role, content))."""
    if isinstance(item, (BaseMessage, str)):
        return True
    if isinstance(item, dict):
        return item.get("type") in MESSAGE_TYPES or "role" in item
    return (  # (role, content): a tuple, or the list msgpack stores it as
        isinstance(item, (tuple, list))
        and len(item) == 2
        and all(isinstance(part, str) for part in item)
    )


def _holds_messages(value: Any) -> bool:
    return isinstance(value, list) and _holds_message_classes(value)


def replayed(spec: Any, history: DeltaChannelHistory) -> Any:
    """A delta channel's value as LangGraph replays it with the graph's own channel
    (`spec`, a `DeltaChannel` with its reducer): the seed, then every write since."""
    channel = spec.from_checkpoint(history.get("seed"))
    channel.replay_writes(history.get("writes") or [])
    return channel.get()


class Rebuilt(NamedTuple):
    """A loaded tuple with its delta message channels rebuilt (`_DeltaSnapshot`s named
    in `names`), and the stored histories read for its other delta channels (`rest`),
    which LangGraph would otherwise read a second time to rebuild them itself."""

    tup: CheckpointTuple
    names: list[str]
    rest: dict[str, DeltaChannelHistory]
    seeds: Mapping[str, Any] = {}
    """The seed each channel's walk ended at, for the channels whose walk found one."""


def with_rebuilt(
    tup: CheckpointTuple, histories: Mapping[str, DeltaChannelHistory]
) -> tuple[CheckpointTuple, list[str]]:
    """The tuple with each delta message channel rebuilt into a `_DeltaSnapshot`.

    Returns the new tuple and the names rebuilt; channels that do not hold
    messages are left out, for LangGraph to rebuild with its own reducer.
    """
    rebuilt = rebuilt_from(tup, histories)
    return rebuilt.tup, rebuilt.names


def rebuilt_from(tup: CheckpointTuple, histories: Mapping[str, DeltaChannelHistory]) -> Rebuilt:
    rebuilt: dict[str, Any] = {}
    rest: dict[str, DeltaChannelHistory] = {}
    for name, history in histories.items():
        messages = rebuild_messages(history)
        if messages is not None:
            rebuilt[name] = as_snapshot(messages)
        else:
            rest[name] = history
    seeds = {name: history["seed"] for name, history in histories.items() if "seed" in history}
    if not rebuilt:
        return Rebuilt(tup, [], rest, seeds)
    return Rebuilt(with_values(tup, rebuilt), list(rebuilt), rest, seeds)


def with_values(tup: CheckpointTuple, changed: Mapping[str, Any]) -> CheckpointTuple:
    """The tuple with `changed` over its stored channel values (the stored one untouched)."""
    values = {**tup.checkpoint["channel_values"], **changed}
    return tup._replace(checkpoint=cast(Checkpoint, {**tup.checkpoint, "channel_values": values}))


def parent_id_of(tup: CheckpointTuple) -> str | None:
    parent = tup.parent_config
    return None if parent is None else (parent.get("configurable") or {}).get("checkpoint_id")


def counters_after_snapshot(
    metadata: Mapping[str, Any], snapshotted: Collection[str]
) -> dict[str, list[int]] | None:
    """The head's snapshot counters for a checkpoint on top of it that snapshots `snapshotted`.

    Those channels restart from zero (LangGraph leaves zero counters out); the
    others advance by one superstep, as LangGraph's `update_state` does.
    """
    counters: Mapping[str, Any] = metadata.get(COUNTERS_KEY) or {}
    advanced = {
        name: [int(updates), int(steps) + 1]
        for name, (updates, steps) in counters.items()
        if name not in snapshotted
    }
    return advanced or None
