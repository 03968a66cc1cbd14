"""Counting a history's tokens: the policy's counter, or LangChain's approximation.

The approximation (`count_tokens_approximately`) adds up per message, so one
count per message serves every later question. `approximate_counts` takes those
counts in one pass, exactly as LangChain takes them, without LangChain's
per-call conversions; a message it does not know by exact class goes to
LangChain's own function. A history within its budget is usually told apart
without counting at all (`lean.fits_paired`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately

from ..policy import TokenCounter
from .approximation import CHARS_PER_TOKEN, IMAGE_TOKENS, OPENAI_ROLE, ROLES, TOKENS_PER_MESSAGE

ROLE_CHARS: dict[type[BaseMessage], int] = {
    cls: len(ROLES[cls.__name__]) for cls in (HumanMessage, AIMessage, SystemMessage, ToolMessage)
}
"""The length of the role name the approximation adds, for the classes read here by
exact class (a subclass may count differently)."""
COUNTS_BLOCKS = "tokens_per_image" in inspect.signature(count_tokens_approximately).parameters
"""Whether the installed LangChain counts a list content block by block (an image as a
fixed count); before that, it counts the list's repr, which is left to it here."""


def count_tokens(messages: Sequence[BaseMessage], counter: TokenCounter | None) -> int:
    """The tokens of `messages` as `counter` counts them (None: the approximation)."""
    if counter is None:
        return sum(approximate_counts(messages))
    return int(counter(messages))


def count_each(messages: Sequence[BaseMessage], counter: TokenCounter | None) -> list[int]:
    """The tokens of each message counted alone."""
    if counter is None:
        return approximate_counts(messages)
    return [int(counter((message,))) for message in messages]


def approximate_counts(messages: Sequence[BaseMessage]) -> list[int]:
    """`count_tokens_approximately((message,))` for each message, in one pass: per
    message, the characters of its text, role, name, call id and calls' repr, a
    token per four rounded up, three more, and a fixed count per image."""
    counts: list[int] = []
    append = counts.append
    for message in messages:
        cls = type(message)
        role = ROLE_CHARS.get(cls)
        content = message.content
        if role is None or (cls is SystemMessage and OPENAI_ROLE in message.additional_kwargs):
            append(count_tokens_approximately((message,)))
            continue
        if type(content) is str:
            chars, images = len(content) + role, 0
        else:
            measured = blocks_size(content)
            if measured is None:
                append(count_tokens_approximately((message,)))
                continue
            chars, images = measured
            chars += role
        if cls is AIMessage:
            if type(content) is str and (calls := message.tool_calls):  # type: ignore[attr-defined]
                chars += len(repr(calls))
        elif cls is ToolMessage:
            chars += len(message.tool_call_id)  # type: ignore[attr-defined]
        if name := message.name:
            chars += len(name)
        append(-(-chars // CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE + images * IMAGE_TOKENS)
    return counts


def blocks_size(content: object) -> tuple[int, int] | None:
    """The characters and images of a list content as the approximation reads them,
    or None for anything it might read otherwise (a text that is not a string)."""
    if type(content) is not list or not COUNTS_BLOCKS:
        return None
    chars = images = 0
    for block in content:
        if type(block) is str:
            chars += len(block)
        elif type(block) is dict:
            kind = block.get("type", "")
            if type(kind) is not str:  # LangChain may fail on it: let it say so
                return None
            if kind in ("image", "image_url"):
                images += 1
            elif kind == "text":
                text = block.get("text", "")
                if type(text) is not str:
                    return None
                chars += len(text)
            else:
                chars += len(repr(block))
        else:
            return None
    return chars, images
