"""`fits_paired`: the shortest proof that a history needs nothing under a token budget.

Most histories loaded under a budget are valid and fit. Proving that costs one
walk: `proof.proves_paired`'s walk, which also adds up what LangChain's
approximation reads (texts, names, call ids), and one C-level pass bounding the
calls' repr. The sum is an upper bound of `count_tokens_approximately`, never
below it, so a history it clears fits; anything else (an odd shape, a list
content, a bound over the budget) goes the long way, which counts exactly.

The walk is `proves_paired`'s rules, written again over each message's field
dict: reading the fields there costs the budget less than an attribute each, and
an extra branch in `proves_paired` would cost every load without a budget.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from itertools import chain
from operator import itemgetter
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from .counting import ROLE_CHARS

_MOST_ROLE_CHARS = max(ROLE_CHARS.values())
_CALL_CHARS = len("{'name': , 'args': , 'id': , 'type': }, ")
"""A call's repr without its values, and its separator in the list."""
_CALL_FIELDS = tuple(map(itemgetter, ("name", "args", "id", "type")))
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
_id_of = itemgetter("id")
_NO_MORE_IDS: Iterator[str] = iter(())


def fits_paired(messages: list[BaseMessage], in_flight: bool, budget: int) -> bool:
    """True when `proves_paired(messages, in_flight)` holds and the approximation
    counts at most `budget` tokens; False when not, or not sure."""
    try:
        sizes = _paired_sizes(messages, in_flight)
        if sizes is None:
            return False
        chars, calls = sizes
        calls_chars = calls_repr_bound(calls)
    except (KeyError, TypeError, ValueError):  # odd data: the long way decides
        return False
    if calls_chars is None:
        return False
    size = len(messages)
    chars += calls_chars + _MOST_ROLE_CHARS * size
    return -(-(chars + 3 * size) // 4) + 3 * size <= budget


def _paired_sizes(messages: list[BaseMessage], in_flight: bool) -> tuple[int, list[Any]] | None:
    """The characters of the texts, names and results' call ids, and every AIMessage's
    calls, of a history `proves_paired` proves; None for one it does not."""
    tool_class, ai_class = ToolMessage, AIMessage
    human_class, system_class, text = HumanMessage, SystemMessage, str
    expected = None  # the id the next message must answer, while a block is open
    more_ids = _NO_MORE_IDS
    chars = 0
    calls_seen: list[Any] = []
    for message in messages:
        cls = type(message)
        fields = message.__dict__
        content = fields["content"]
        if content.__class__ is not text:
            return None
        chars += len(content)
        if name := fields["name"]:
            chars += len(name)
        if cls is tool_class:
            if expected is None or fields["tool_call_id"] != expected:
                return None
            chars += len(expected)
            expected = next(more_ids, None)
        elif expected is not None:
            return None
        elif cls is ai_class:
            calls = fields["tool_calls"]
            if fields["invalid_tool_calls"]:
                return None
            if not calls:
                continue
            calls_seen.append(calls)
            if len(calls) == 1:
                expected = calls[0]["id"]
                if not expected:
                    return None
            else:
                ids = list(map(_id_of, calls))
                if len(set(ids)) != len(ids) or not all(ids):
                    return None
                more_ids = iter(ids)
                expected = next(more_ids)
        elif cls is not human_class and cls is not system_class:
            return None
    if expected is not None and not in_flight:
        return None
    return chars, calls_seen


def calls_repr_bound(calls_seen: list[Any]) -> int | None:
    """At least the sum of `len(repr(calls))` over `calls_seen`, taken with C-level
    passes: each call's keys exactly, its values by `REPR_PER_BYTE` times their
    marshalled size (format 2, which shares nothing and writes only plain types,
    so that no subclass with a repr of its own gets through). None where a call is
    not LangChain's four keys."""
    if set(map(type, calls_seen)) - {list}:
        return None
    flat = list(chain.from_iterable(calls_seen))
    brackets = 2 * len(calls_seen)
    if not flat:
        return brackets
    if set(map(type, flat)) != {dict} or sum(map(len, flat)) != 4 * len(flat):
        return None  # with the four keys read below, a dict of four has only them
    values = [list(map(field, flat)) for field in _CALL_FIELDS]
    try:
        data = marshal.dumps(values, 2)
    except ValueError:  # a type marshal does not write, or nesting too deep
        return None
    return brackets + _CALL_CHARS * len(flat) + marshalled_repr_bound(data)


def marshalled_repr_bound(data: bytes) -> int:
    """At least the repr's characters, separators included, of what `data` holds:
    `data` written by `marshal.dumps(value, 2)`."""
    extra = sum(data.count(code) * more for code, more in SINGLETON_EXTRA.items())
    return REPR_PER_BYTE * len(data) + extra
