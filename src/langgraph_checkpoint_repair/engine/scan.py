"""The cheap walk: prove a history valid, or say which blocks are wrong.

A block is an AIMessage with tool calls and the run of ToolMessages right
after it. The walk looks at each message's class once and keeps only the ids
its open block still waits for (one id, or a set for parallel calls), so a
valid history costs no allocation beyond those sets, and results answered in
any order cost the same. It records the AIMessages whose block must be
rebuilt (a call unanswered, without an id, or with an id used twice), and
whether any result strays outside the block of the call it answers; strays
can answer calls anywhere earlier, so they need the full matching.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

OTHER, TOOL, AI = 0, 1, 2

_KIND_BY_CLASS: dict[type, int] = {}


class Scan(NamedTuple):
    broken_blocks: list[int]
    """Indices of the AIMessages whose block must be rebuilt, in order."""
    strays: bool
    """True when some result is not in the block of a call it answers (or the data is odd)."""


class NotAMessage(TypeError):
    """An item of the history is not a LangChain message."""


def kind_of(item: object, index: int) -> int:
    """OTHER, TOOL or AI for the class of `item`, learnt once per class."""
    cls = item.__class__
    kind = _KIND_BY_CLASS.get(cls)
    if kind is not None:
        return kind
    if not issubclass(cls, BaseMessage):
        raise NotAMessage(f"item {index} is a {cls.__name__}, not a message")
    kind = TOOL if issubclass(cls, ToolMessage) else AI if issubclass(cls, AIMessage) else OTHER
    _KIND_BY_CLASS[cls] = kind
    return kind


def scan(messages: Sequence[BaseMessage], in_flight: bool) -> Scan | None:
    """None when every call is answered once in its block and no result strays.

    With `in_flight`, the last block may still wait for results: its calls may run.
    """
    try:
        return _scan(messages, in_flight)
    except NotAMessage:
        raise
    except (AttributeError, KeyError, TypeError, ValueError):  # odd data: the full matching judges
        return Scan([], True)


def _scan(messages: Sequence[BaseMessage], in_flight: bool) -> Scan | None:
    kinds = _KIND_BY_CLASS
    broken: list[int] = []
    strays = False
    block = -1
    waiting: Any = None  # None, the one id still unanswered, or a set of them
    for i, message in enumerate(messages):
        kind = kinds.get(message.__class__)
        if kind is None:
            kind = kind_of(message, i)
        if kind == TOOL:
            if waiting is None:
                strays = True
            elif waiting.__class__ is str:
                if message.tool_call_id == waiting:  # type: ignore[attr-defined]
                    waiting = None
                else:
                    strays = True
            elif message.tool_call_id in waiting:  # type: ignore[attr-defined]
                waiting.remove(message.tool_call_id)  # type: ignore[attr-defined]
                if not waiting:
                    waiting = None
            else:
                strays = True
            continue
        if waiting is not None:
            waiting = None
            if not broken or broken[-1] != block:
                broken.append(block)
        if kind == AI:
            calls = message.tool_calls  # type: ignore[attr-defined]
            invalid = message.invalid_tool_calls  # type: ignore[attr-defined]
            if invalid or len(calls) > 1:
                block = i
                waiting, sound = _waiting_ids(calls, invalid)
                if not sound:
                    broken.append(i)
            elif calls:
                block = i
                waiting = calls[0]["id"]
                if not waiting:
                    waiting = None
                    broken.append(i)
    if waiting is not None and not in_flight and (not broken or broken[-1] != block):
        broken.append(block)
    return Scan(broken, strays) if broken or strays else None


def _waiting_ids(calls: list[Any], invalid: list[Any]) -> tuple[set[str] | None, bool]:
    """The ids a block of parallel calls waits for, and False if one is missing or reused."""
    ids = {c["id"] for c in calls}
    count = len(calls)
    if invalid:
        ids.update(c["id"] for c in invalid)
        count += len(invalid)
    sound = len(ids) == count and None not in ids and "" not in ids
    ids.discard(None)
    ids.discard("")
    return ids or None, sound
