"""Counting a history's tokens: the policy's counter, or LangChain's approximation.

The approximation (`count_tokens_approximately`) adds up per message, so one
count per message serves every later question. A history within its budget is
usually told apart without counting at all: `approximate_bound` is an upper
bound of that approximation, taken with C-level passes over the messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
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
_BOUNDED = frozenset({HumanMessage, AIMessage, AIMessageChunk, SystemMessage, ToolMessage})
_content = attrgetter("content")


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
    shortcut does not apply (list contents, where images count apart, or other
    message classes, whose role names may be long).

    Every character the approximation reads is counted here or over-counted:
    string contents, the repr of every `tool_calls` (joined in one repr, which is
    longer than the parts), tool call ids, names and the longest role name."""
    contents = list(map(_content, messages))
    if set(map(type, contents)) - {str} or set(map(type, messages)) - _BOUNDED:
        return None
    chars = sum(map(len, contents))
    chars += len(repr(list(map(getattr, messages, repeat("tool_calls"), repeat(None)))))
    for field in ("tool_call_id", "name"):
        chars += sum(map(len, filter(None, map(getattr, messages, repeat(field), repeat(None)))))
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
