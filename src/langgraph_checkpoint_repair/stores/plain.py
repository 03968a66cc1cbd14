"""A cheap first look at stored message blobs, without building message objects.

LangGraph's default serializer stores a message list as msgpack in which each
message is an extension holding (module, class name, fields, ...). Decoding
that into plain tuples and dicts is several times cheaper than rebuilding
pydantic messages, and enough to prove most histories clean. The look is
conservative: anything unexpected answers "look closer", and the engine,
on fully loaded messages, always makes the decision.
"""

from __future__ import annotations

from typing import Any

import ormsgpack

_PYDANTIC_EXTS = (4, 5)  # EXT_PYDANTIC_V1, EXT_PYDANTIC_V2 in langgraph's JsonPlusSerializer
_AI_CLASSES = frozenset({"AIMessage", "AIMessageChunk"})
_TOOL_CLASSES = frozenset({"ToolMessage", "ToolMessageChunk"})


class _Unknown:
    """Stands for any extension value the first look does not need to understand."""


_UNKNOWN = _Unknown()


def _plain_ext(code: int, data: bytes) -> Any:
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
    expected: list[Any] = []
    for item in value:
        if not (isinstance(item, tuple) and isinstance(item[1], dict)):
            return False
        name, fields = item
        if name in _TOOL_CLASSES:
            if fields.get("tool_call_id") not in expected:
                return False
            expected.remove(fields.get("tool_call_id"))
            continue
        if expected:
            return False
        if name in _AI_CLASSES:
            calls = fields.get("tool_calls") or []
            invalid = fields.get("invalid_tool_calls") or []
            expected = [c.get("id") if isinstance(c, dict) else None for c in [*calls, *invalid]]
            if not all(expected) or len(set(expected)) != len(expected):
                return False  # a missing id, or one used twice in the message
    return not expected
