"""A cheap first look at stored message blobs, without building message objects.

LangGraph's default serializer stores a message list as msgpack in which each
message is an extension holding (module, class name, fields, ...). Decoding
that into plain tuples and dicts is several times cheaper than rebuilding
pydantic messages, and enough to prove most histories clean. The look is
conservative: anything unexpected answers "look closer", and the engine,
on fully loaded messages, always makes the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ormsgpack
from langgraph.graph.message import REMOVE_ALL_MESSAGES

_PYDANTIC_EXTS = (4, 5)  # EXT_PYDANTIC_V1, EXT_PYDANTIC_V2 in langgraph's JsonPlusSerializer
_SNAPSHOT_EXT = 7  # EXT_DELTA_SNAPSHOT: a delta channel's whole value
_AI_CLASSES = frozenset({"AIMessage", "AIMessageChunk"})
_TOOL_CLASSES = frozenset({"ToolMessage", "ToolMessageChunk"})
_OTHER_CLASSES = frozenset(
    {"HumanMessage", "HumanMessageChunk", "SystemMessage", "SystemMessageChunk", "ChatMessage",
     "ChatMessageChunk", "FunctionMessage", "FunctionMessageChunk", "RemoveMessage"}
)  # fmt: skip


class _Unknown:
    """Stands for any extension value the first look does not need to understand."""


_UNKNOWN = _Unknown()


def _plain_ext(code: int, data: bytes) -> Any:
    if code == _SNAPSHOT_EXT:  # the list inside: a snapshot is looked at like a plain value
        return ormsgpack.unpackb(data, ext_hook=_plain_ext, option=ormsgpack.OPT_NON_STR_KEYS)
    if code in _PYDANTIC_EXTS:
        decoded = ormsgpack.unpackb(data, ext_hook=_plain_ext, option=ormsgpack.OPT_NON_STR_KEYS)
        if isinstance(decoded, (list, tuple)) and len(decoded) >= 3:
            return (decoded[1], decoded[2])  # (class name, fields)
    return _UNKNOWN


def decode_plain(blob: bytes) -> Any:
    """The msgpack blob as plain structures; messages become (class name, fields)."""
    return ormsgpack.unpackb(blob, ext_hook=_plain_ext, option=ormsgpack.OPT_NON_STR_KEYS)


def plain_history_is_clean(value: Any) -> bool:
    """True only when the decoded history certainly satisfies the pairing rules.

    The same rule as the engine's fast check: every call answered exactly once
    in the run of results right after it, ending with no call unanswered.
    """
    if not isinstance(value, list):
        return False
    expected: set[Any] = set()  # a set: a message with tens of thousands of calls stays linear
    for item in value:
        if not (isinstance(item, tuple) and isinstance(item[1], dict)):
            return False
        name, fields = item
        if name in _TOOL_CLASSES:
            answered = fields.get("tool_call_id")
            if answered not in expected:
                return False
            expected.discard(answered)
            continue
        if expected:
            return False
        if name not in _AI_CLASSES and name not in _OTHER_CLASSES:
            return False  # not LangChain's: the full load names it (both looks since the findings)
        if name in _AI_CLASSES:
            calls = fields.get("tool_calls") or []
            invalid = fields.get("invalid_tool_calls") or []
            ids = [c.get("id") if isinstance(c, dict) else None for c in [*calls, *invalid]]
            expected = set(ids)
            if not all(ids) or len(expected) != len(ids):
                return False  # a missing id, or one used twice in the message
    return not expected


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
