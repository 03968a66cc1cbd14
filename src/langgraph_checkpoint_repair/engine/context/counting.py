"""Counting a history's tokens: the policy's counter, or LangChain's approximation.

The approximation (`count_tokens_approximately`) adds up per message, so one
count per message serves every later question. A history within its budget is
usually told apart without counting at all: `approximate_bound` is an upper
bound of that approximation, taken with C-level passes over the messages.
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, is_

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately

from ..policy import TokenCounter

_ROLE_CHARS = len("assistant")
"""The longest role name the approximation adds for these classes."""
_PER_MESSAGE = 4
"""Its fixed 3 tokens a message, and less than 1 for rounding the message up."""
_BOUNDED = frozenset({HumanMessage, AIMessage, SystemMessage, ToolMessage})
"""The classes read here exactly (a subclass may count differently)."""
_content = attrgetter("content")
_name = attrgetter("name")
_tool_calls = attrgetter("tool_calls")
_tool_call_id = attrgetter("tool_call_id")
REPR_PER_BYTE = 7
"""The most characters of repr, separator included, for one byte of marshal: a
`False` in a list is one byte there and `False, ` in its repr. Anything larger is
larger in both: an int is 5 bytes, a string 5 bytes and its UTF-8, a container 5
bytes and its items."""


def count_tokens(messages: Sequence[BaseMessage], counter: TokenCounter | None) -> int:
    """The tokens of `messages` as `counter` counts them (None: the approximation)."""
    if counter is None:
        return count_tokens_approximately(messages)
    return int(counter(messages))


def count_each(messages: Sequence[BaseMessage], counter: TokenCounter | None) -> list[int]:
    """The tokens of each message counted alone."""
    return [count_tokens((message,), counter) for message in messages]


def approximate_bound(messages: Sequence[BaseMessage]) -> int | None:
    """At least what `count_tokens_approximately(messages)` returns, or None where the
    shortcut does not apply (list contents, where images count apart; other message
    classes, whose role names may be long; calls marshal cannot write).

    Every character the approximation reads is counted here or over-counted:
    string contents, names, tool call ids, the longest role name, and the repr of
    every `tool_calls`, bounded by `REPR_PER_BYTE` times their marshalled size
    (format 2, which shares nothing): C-level passes instead of a repr each."""
    contents = list(map(_content, messages))
    classes = list(map(type, messages))
    if set(map(type, contents)) - {str} or set(classes) - _BOUNDED:
        return None
    ai_messages = compress(messages, map(is_, classes, repeat(AIMessage)))
    try:
        calls = len(marshal.dumps(list(map(_tool_calls, ai_messages)), 2))
    except ValueError:  # an object marshal cannot write, or nesting too deep
        return None
    results = compress(messages, map(is_, classes, repeat(ToolMessage)))
    chars = sum(map(len, contents)) + REPR_PER_BYTE * calls
    chars += sum(map(len, filter(None, map(_name, messages))))
    chars += sum(map(len, map(_tool_call_id, results)))
    chars += _ROLE_CHARS * len(messages)
    return -(-chars // 4) + _PER_MESSAGE * len(messages)


def within_budget(
    messages: Sequence[BaseMessage], budget: int, counter: TokenCounter | None
) -> tuple[bool, int | None]:
    """Whether `messages` fit in `budget`, and the count when one was made."""
    if counter is None:
        bound = approximate_bound(messages)
        if bound is not None and bound <= budget:
            return True, None
    total = count_tokens(messages, counter)
    return total <= budget, total
