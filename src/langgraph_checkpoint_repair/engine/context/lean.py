"""`fits_paired`: the shortest proof that a history needs nothing under a token budget.

Most histories loaded under a budget are valid and fit. Proving that costs one
walk: `proof.proves_paired`'s walk, which also adds up what LangChain's
approximation reads (texts, names, call ids) and gathers the calls' names, ids
and arguments, whose repr is then bounded by C-level passes. The sum is an upper
bound of `count_tokens_approximately`, never below it, so a history it clears
fits; anything else (an odd shape, an odd content, a bound over the budget) goes
the long way, which counts exactly.

It shadows two rules: the pairing rule (`walk`, through `proof.proves_paired`) and
LangChain's approximation (`approximation`, counted by `counting`). The walk is
`proves_paired`'s rules, written again over each message's field
dict: reading the fields there costs the budget less than an attribute each, and
an extra branch in `proves_paired` would cost every load without a budget.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from .approximation import CHARS_PER_TOKEN, IMAGE_TOKENS, OPENAI_ROLE, TOKENS_PER_MESSAGE
from .counting import ROLE_CHARS, blocks_size

_CALL_CHARS = len("{'name': , 'args': , 'id': , 'type': 'tool_call'}, ")
"""A call's repr without its name, arguments and id, and its separator in the list."""
_MESSAGE_CHARS = max(ROLE_CHARS.values()) + len("[]")
"""The most a message adds for its role, and the brackets of its calls' list."""
ESCAPES_PER_CHAR = 10
"""The most characters of repr for one character of a string (`\\U000e0001`)."""
REPR_PER_BYTE = 7
"""The most characters of repr, separator included, for one byte of marshal, but
for the two singletons below: a `False` in a list is one byte there and `False, `
in its repr. Anything larger is larger in both: an int is 5 bytes, a string 5
bytes and its UTF-8, a container 5 bytes and its items."""
SINGLETON_EXTRA = {
    ord("."): len("Ellipsis, ") - REPR_PER_BYTE,
    ord("S"): len("<class 'StopIteration'>, ") - REPR_PER_BYTE,
}
"""The one-byte objects whose repr is longer still, by their marshal code: each
byte of that value in the output (a string's byte too) counts that much more."""
_NO_MORE_IDS: Iterator[str] = iter(())


def fits_paired(messages: list[BaseMessage], in_flight: bool, budget: int) -> bool:
    """True when `proves_paired(messages, in_flight)` holds and the approximation
    counts at most `budget` tokens; False when not, or not sure."""
    try:
        walked = _paired_sizes(messages, in_flight)
        if walked is None:
            return False
        chars, strings, arguments = walked
        chars += strings_repr_bound(strings)
        if arguments:
            chars += marshalled_repr_bound(marshal.dumps(arguments, 2))
    except (KeyError, TypeError, ValueError):  # odd data (or what marshal cannot write)
        return False
    size = len(messages)
    chars += _MESSAGE_CHARS * size
    # each message's ceil(chars / 4) summed is at most one ceil over all, 3 more each
    rounding = (CHARS_PER_TOKEN - 1) * size
    return -(-(chars + rounding) // CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * size <= budget


def _paired_sizes(
    messages: list[BaseMessage], in_flight: bool
) -> tuple[int, list[str], list[Any]] | None:
    """For a history `proves_paired` proves: the characters counted as they are (texts,
    names, results' call ids, the calls' fixed keys), the calls' names and ids (whose
    repr may escape), and their arguments. None for a history it does not prove, or
    a call that is not LangChain's four keys of plain values."""
    tool_class, ai_class = ToolMessage, AIMessage
    human_class, system_class, text = HumanMessage, SystemMessage, str
    expected = None  # the id the next message must answer, while a block is open
    more_ids = _NO_MORE_IDS  # the ids after it, for a block of several calls
    chars = 0
    strings: list[str] = []
    arguments: list[Any] = []
    for message in messages:
        cls = type(message)
        fields = message.__dict__
        content = fields["content"]
        if content.__class__ is text:
            chars += len(content)
        else:  # blocks: their texts, and each image as its count in characters
            measured = blocks_size(content)
            if measured is None:
                return None
            chars += measured[0] + CHARS_PER_TOKEN * IMAGE_TOKENS * measured[1]
        if name := fields["name"]:
            chars += len(name)
        if cls is tool_class:
            call_id = fields["tool_call_id"]
            if expected is None or call_id != expected:
                return None
            chars += len(call_id)
            expected = next(more_ids, None)
        elif expected is not None:
            return None
        elif cls is ai_class:
            calls = fields["tool_calls"]
            if fields["invalid_tool_calls"]:
                return None
            if not calls:
                continue
            ids = _read_calls(calls, strings, arguments)
            if ids is None:
                return None
            chars += _CALL_CHARS * len(ids)
            if len(ids) == 1:
                expected = ids[0]
            else:
                if len(set(ids)) != len(ids):
                    return None
                more_ids = iter(ids)
                expected = next(more_ids)
        elif cls is system_class:
            if OPENAI_ROLE in fields["additional_kwargs"]:  # a role of its own, any length
                return None
        elif cls is not human_class:
            return None
    if expected is not None and not in_flight:
        return None
    return chars, strings, arguments


def _read_calls(calls: Any, strings: list[str], arguments: list[Any]) -> list[str] | None:
    """The ids of `calls`, their names and ids added to `strings` and their arguments
    to `arguments`; None unless each is LangChain's four keys, with strings (not a
    subclass, whose repr may be its own) and a non-empty id."""
    if calls.__class__ is not list:
        return None
    ids = []
    for call in calls:
        if call.__class__ is not dict or len(call) != 4:  # with the keys read below, only them
            return None
        call_id, name, kind = call["id"], call["name"], call["type"]
        if call_id.__class__ is not str or name.__class__ is not str or not call_id:
            return None
        if kind.__class__ is not str or kind != "tool_call":
            return None
        strings.append(name)
        strings.append(call_id)
        arguments.append(call["args"])
        ids.append(call_id)
    return ids


def strings_repr_bound(strings: list[str]) -> int:
    """At least the sum of `len(repr(s))` over `strings`: a printable string escapes
    only a quote or a backslash, by one character more; any other character takes
    at most `ESCAPES_PER_CHAR`."""
    joined = "".join(strings)
    quotes = 2 * len(strings)
    if joined.isprintable():
        return quotes + len(joined) + joined.count("'") + joined.count("\\")
    return quotes + ESCAPES_PER_CHAR * len(joined)


def marshalled_repr_bound(data: bytes) -> int:
    """At least the repr's characters, separators included, of what `data` holds:
    `data` written by `marshal.dumps(value, 2)`."""
    extra = sum(data.count(code) * more for code, more in SINGLETON_EXTRA.items())
    return REPR_PER_BYTE * len(data) + extra
