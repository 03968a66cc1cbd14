"""The tool calls of an AIMessage, as the rules see them.

Calls are `tool_calls` then `invalid_tool_calls`. A call without an id cannot
be answered; a second call with an id already used in the same message cannot
be answered apart from the first, so it is removed. Both are noted in entry
order, so the actions read like the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from langchain_core.messages import AIMessage

NoteKind = Literal["unrepairable", "duplicate_call_dropped"]


class Call(NamedTuple):
    """One tool call of an AIMessage."""

    id: str
    name: str
    args: Any
    invalid: bool
    """True for an entry of `invalid_tool_calls` (arguments that did not parse)."""
    position: int
    """Position in `tool_calls` (or `invalid_tool_calls`)."""


class Note(NamedTuple):
    """A call that takes no part in matching: id-less, or a duplicate id."""

    kind: NoteKind
    call_id: str | None
    name: str


class MessageCalls(NamedTuple):
    calls: list[Call]
    """The answerable calls, ids unique, in entry order."""
    duplicates: list[Call]
    """Later calls reusing an id of `calls`: removed from the message."""
    notes: list[Note]


def read_calls(message: AIMessage) -> MessageCalls:
    """Sort the entries of `message` into answerable calls, duplicates and notes."""
    calls: list[Call] = []
    duplicates: list[Call] = []
    notes: list[Note] = []
    seen: set[str] = set()
    lists: tuple[tuple[bool, Sequence[Any]], ...] = (
        (False, message.tool_calls),
        (True, message.invalid_tool_calls),
    )
    for invalid, entries in lists:
        for position, entry in enumerate(entries or ()):
            call_id, name = entry.get("id"), entry.get("name") or ""
            if not call_id:
                notes.append(Note("unrepairable", None, name))
                continue
            call = Call(call_id, name, entry.get("args"), invalid, position)
            if call_id in seen:
                duplicates.append(call)
                notes.append(Note("duplicate_call_dropped", call_id, name))
            else:
                seen.add(call_id)
                calls.append(call)
    return MessageCalls(calls, duplicates, notes)
