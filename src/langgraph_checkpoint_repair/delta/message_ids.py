"""Messages without an id in a delta channel's stored writes, and the same writes with
ids of their own.

A reducer other than LangGraph's stores its input as given: `[("user", "...")]` as a
list holding a 2-list (msgpack keeps no tuples), a plain string as a string, a message
as it came, perhaps with `id=None`. Every replay of such a write makes its message
again: LangGraph's reducer leaves it without an id, so no `RemoveMessage` can name it,
and a reducer that gives ids makes a new random one each time, so the same message
comes back under another id (or twice). An id derived from where the write is stored
(its checkpoint, task, index and place in it) is the same on every read and after
every repair of the same rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langgraph.checkpoint.base import CheckpointTuple

from .channels import Rebuilt, is_message_like, is_snapshot, snapshot_value

STAMP_NAMESPACE = uuid.UUID("5b0c8f43-7a7e-4f0e-9a3d-0f3c5f6f2a61")
"""The uuid5 namespace of the ids stamped into stored writes (fixed: ids never change)."""


def without_ids(messages: Iterable[Any]) -> int:
    """How many of a rebuilt history's messages have no id."""
    return sum(1 for message in messages if getattr(message, "id", None) is None)


def lacks_an_id(item: Any) -> bool:
    """An item of a write the reducer turns into a message without an id: a message
    whose id is None, a message dict without one, a string, a (role, content) pair."""
    if not is_message_like(item):
        return False
    if isinstance(item, BaseMessage):
        return item.id is None
    return not isinstance(item, dict) or item.get("id") is None


def write_lacks_ids(value: Any) -> bool:
    """Whether a stored write (a list of items, or one item) holds an item without an id."""
    if isinstance(value, list):  # as the reducer reads it: a list of items, even of two
        return any(map(lacks_an_id, value))
    return lacks_an_id(value)


def stamped(value: Any, where: str) -> Any:
    """The write with each item that lacks an id made a message with the id derived
    from `where` (its row) and its place; items with ids are kept as they are. A list
    stays a list, a single item becomes a single message."""
    if isinstance(value, list):
        return [_stamped(item, where, n) for n, item in enumerate(value)]
    return _stamped(value, where, 0)


def _stamped(item: Any, where: str, n: int) -> Any:
    if not lacks_an_id(item):
        return item
    (message,) = convert_to_messages([tuple(item) if isinstance(item, list) else item])
    return message.model_copy(update={"id": stamp_id(where, n)})


def stamp_id(where: str, n: int) -> str:
    """The id stamped into the `n`-th item of the write stored at `where`."""
    return str(uuid.uuid5(STAMP_NAMESPACE, f"{where}#{n}"))


def seeds_without_ids(stored: CheckpointTuple, loaded: Rebuilt) -> set[str]:
    """The delta channels whose stored seed (a snapshot at the head, or the value its
    walk ended at) holds a message without an id: no write can be stamped for those,
    so a repair snapshots the whole value with ids given (`with_ids`)."""
    kept = stored.checkpoint["channel_values"]
    seeds = {**loaded.seeds, **{name: v for name, v in kept.items() if is_snapshot(v)}}
    found = set()
    for name, seed in seeds.items():
        value = snapshot_value(seed)
        if isinstance(value, list) and without_ids(value):
            found.add(name)
    return found


def with_ids(history: list[BaseMessage], where: str) -> tuple[list[BaseMessage], list[int]]:
    """The history with each message that lacks an id given one derived from `where`
    (the thread's channel) and its place, and those places: the same history gives
    the same ids, after an undo too."""
    given = [n for n, message in enumerate(history) if message.id is None]
    if not given:
        return history, []
    changed = list(history)
    for n in given:
        changed[n] = history[n].model_copy(update={"id": stamp_id(where, n)})
    return changed, given
