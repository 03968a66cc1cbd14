"""An upper bound of LangChain's `count_tokens_approximately` for a history the first
look decoded (`plain.decode_plain`: each message a (class name, fields) tuple), so a
scan with a token budget loads only the heads that may be over it.

The approximation gives each message ceil(chars / 4) + 3 tokens, and 85 more for each
image block, where chars adds up: a string content, or each block of a list content
(a string, a text block's text, nothing for an image, the repr of any other block);
for an AI message with a string content, the repr of its tool calls; a tool message's
call id; the role's name; the message's name. The stored fields are the ones the
saver's messages are built from, so each is read here as LangChain reads it, with
one allowance: a stored tool call may lack `'type': 'tool_call'`, which the AI message
adds (`CALL_TYPE_CHARS` a call). Wherever the built message may hold something the
fields do not say (calls parsed from `additional_kwargs` or from chunks, a value of
another type than LangChain's, anything but plain msgpack data in a repr'd part) or
the count may raise, the answer is None: the head is loaded and counted in full.

Like `plain`, this module needs nothing but ormsgpack: the first-look helper process
loads it from its file alone.
"""

from __future__ import annotations

from typing import Any

import ormsgpack

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 3
TOKENS_PER_IMAGE = 85
IMAGE_TYPES = ("image", "image_url")
CALL_TYPE_CHARS = len(", 'type': 'tool_call'")
"""What the built AI message may add to a stored call's repr."""

_ROLES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "ToolMessage": "tool",
    "SystemMessage": "system",
    "FunctionMessage": "function",
    "ChatMessage": "",  # its `role` field
}
_ROLES |= {f"{name}Chunk": role for name, role in _ROLES.items()}
_AI = frozenset({"AIMessage", "AIMessageChunk"})
_TOOL = frozenset({"ToolMessage", "ToolMessageChunk"})
_SYSTEM = frozenset({"SystemMessage", "SystemMessageChunk"})
_CHAT = frozenset({"ChatMessage", "ChatMessageChunk"})
_FUNCTION = frozenset({"FunctionMessage", "FunctionMessageChunk"})
"""Its `name` is required: a message stored without one is built without validation,
and without the attribute LangChain reads."""
_PLAIN_ONLY = ormsgpack.OPT_PASSTHROUGH_TUPLE
"""`packb` with this raises on a tuple (a nested message or model) and on any object
`plain` stands in for an extension: what is left reprs as the built value does."""


class _Unbounded(Exception):
    """The fields do not say what LangChain would count: load the head."""


def history_bound(messages: Any) -> int | None:
    """At least `count_tokens_approximately` of the messages the saver builds from
    `messages` (decoded by `plain.decode_plain`); None where that cannot be told."""
    if type(messages) is not list:
        return None
    total = 0
    try:
        for item in messages:
            if type(item) is not tuple:
                return None
            total += _message_bound(*item)
    except _Unbounded:
        return None
    return total


def _message_bound(name: str, fields: dict[str, Any]) -> int:
    role = _ROLES.get(name)
    if role is None:  # RemoveMessage, or a class LangChain gives no role
        raise _Unbounded
    content = fields.get("content")
    if type(content) is str:
        chars, images = len(content), 0
        if name in _AI:
            chars += _calls_chars(fields)
    elif type(content) is list:
        chars, images = _blocks(content)
        if name in _AI:
            _calls_chars(fields)  # a list content counts no calls, but they must be as stored
    else:
        raise _Unbounded
    chars += _text(fields.get("name"), none=name not in _FUNCTION)
    chars += _role_chars(name, role, fields)
    if name in _TOOL:
        chars += _text(fields.get("tool_call_id"))
    return -(-chars // CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE + TOKENS_PER_IMAGE * images


def _text(value: Any, none: bool = False) -> int:
    """The length of a field LangChain counts with `len`, which must be a string."""
    if type(value) is str:
        return len(value)
    if none and value is None:
        return 0
    raise _Unbounded


def _role_chars(name: str, role: str, fields: dict[str, Any]) -> int:
    if name in _SYSTEM:
        extra = _extras(fields)
        return _text(extra["__openai_role__"]) if "__openai_role__" in extra else len(role)
    if name in _CHAT:
        return _text(fields.get("role"))
    return len(role)


def _extras(fields: dict[str, Any]) -> dict[str, Any]:
    extra = fields.get("additional_kwargs", {})
    if type(extra) is not dict:
        raise _Unbounded
    return extra


def _calls_chars(fields: dict[str, Any]) -> int:
    """The repr of the AI message's tool calls, as built from these fields."""
    calls = fields.get("tool_calls")
    if not calls:  # the built message parses calls from `additional_kwargs` or chunks
        if _extras(fields).get("tool_calls") or fields.get("tool_call_chunks"):
            raise _Unbounded
        return 0
    if fields.get("tool_call_chunks") or type(calls) is not list:  # a chunk rebuilds them
        raise _Unbounded
    return _repr_chars(calls) + CALL_TYPE_CHARS * len(calls)


def _blocks(content: list[Any]) -> tuple[int, int]:
    """The characters and the images of a list content, as LangChain counts its blocks."""
    chars = images = 0
    for block in content:
        if type(block) is str:
            chars += len(block)
            continue
        if type(block) is not dict:
            raise _Unbounded
        kind = block.get("type", "")
        if type(kind) is not str:
            raise _Unbounded
        if kind in IMAGE_TYPES:
            images += 1
        elif kind == "text":
            chars += _text(block.get("text", ""))
        else:
            chars += _repr_chars(block)
    return chars, images


def _repr_chars(value: Any) -> int:
    """The length of the built value's repr: plain msgpack data reprs the same here."""
    try:
        ormsgpack.packb(value, option=_PLAIN_ONLY)
    except TypeError:
        raise _Unbounded from None
    return len(repr(value))
