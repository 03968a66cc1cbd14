"""A delta message channel rebuilt from its first look (`stores.plain`), to judge it
without building message objects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.graph.message import REMOVE_ALL_MESSAGES

REMOVE_CLASS = "RemoveMessage"


def plain_replay(seed: Any, writes: Sequence[Any]) -> list[Any] | None:
    """A delta message channel's value from its decoded seed and writes, as LangGraph's
    reducer builds it (replace by id, `RemoveMessage`, `REMOVE_ALL_MESSAGES`); None for
    anything it does not understand (an `Overwrite`, a raw dict), to look closer."""
    if not isinstance(seed, list) or not all(map(_is_message, seed)):
        return None
    result: list[Any] = list(seed)
    index = {fields["id"]: n for n, (_, fields) in enumerate(seed) if fields.get("id") is not None}
    for write in writes:
        for item in write if isinstance(write, list) else [write]:
            if not _is_message(item):
                return None
            _apply(result, index, item)
    return [item for item in result if item is not None]


def _is_message(item: Any) -> bool:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict)


def _apply(result: list[Any], index: dict[Any, int], item: tuple[str, dict[str, Any]]) -> None:
    name, fields = item
    message_id = fields.get("id")
    if name == REMOVE_CLASS:
        if message_id == REMOVE_ALL_MESSAGES:
            result.clear()
            index.clear()
        elif message_id in index:
            result[index.pop(message_id)] = None
    elif message_id is None:
        result.append(item)
    elif message_id in index:
        result[index[message_id]] = item
    else:
        index[message_id] = len(result)
        result.append(item)
