"""An upper bound of LangChain's `count_tokens_approximately` for a history the first
look decoded (`plain.decode_plain`: each message a (class name, fields) tuple), so a
scan with a token budget loads only the heads that may be over it.

The approximation gives each message ceil(chars / 4) + 3 tokens, where chars adds up
a string content; for an AI message, the repr of its tool calls; a tool message's call
id; the role's name; the message's name. A list content (blocks) is left to the full
load: LangChain counts it as the list's repr before langchain-core 1.1, block by block
since. The stored fields are the ones the
saver's messages are built from, so each is read here as LangChain reads it, with
one allowance: a stored tool call may lack `'type': 'tool_call'`, which the AI message
adds (`CALL_TYPE_CHARS` a call). So the bound is LangChain's count, plus a few tokens
a call: tight enough that a head is loaded only when it is within a few tokens a call
of its budget, or over it.

Wherever the built message may hold something the fields do not say, or the count
may raise, the answer is None and the head is loaded and counted in full: fields
holding an extension or a key that is not a string (`plain.NotPlainFields`: a repr
here would not be the built value's), calls parsed from `additional_kwargs` or
rebuilt from chunks, a field of another type than LangChain's, a class LangChain
gives no role (`RemoveMessage`). Fields of plain msgpack data repr as the built
message's values do.

Like `plain`, this module needs nothing but the standard library (and the
approximation's constants, themselves standard library only): the first-look helper
process loads both from their files alone.
"""

from __future__ import annotations

import importlib
from typing import Any

_APPROXIMATION = "...engine.context.approximation" if __package__ else "approximation"
_approximation = importlib.import_module(_APPROXIMATION, __package__)
"""LangChain's constants (`engine.context.approximation`); in the helper process, the
module loaded from its file before this one."""
CHARS_PER_TOKEN: int = _approximation.CHARS_PER_TOKEN
TOKENS_PER_MESSAGE: int = _approximation.TOKENS_PER_MESSAGE
_OPENAI_ROLE: str = _approximation.OPENAI_ROLE
_SYSTEM_ROLE: str = _approximation.ROLES["SystemMessage"]
CALL_TYPE_CHARS = len(", 'type': 'tool_call'")
"""What the built AI message may add to a stored call's repr."""

_SYSTEM = frozenset({"SystemMessage", "SystemMessageChunk"})
_CHAT = frozenset({"ChatMessage", "ChatMessageChunk"})
_ROLE_CHARS = {name: len(role) for name, role in _approximation.ROLES.items()}
_ROLE_CHARS |= {f"{name}Chunk": chars for name, chars in _ROLE_CHARS.items()}
_ROLE_CHARS |= dict.fromkeys(_SYSTEM | _CHAT, -1)  # read from the fields
"""The length of the role LangChain counts for each class it gives one."""
_AI = frozenset({"AIMessage", "AIMessageChunk"})
_TOOL = frozenset({"ToolMessage", "ToolMessageChunk"})
_FUNCTION = frozenset({"FunctionMessage", "FunctionMessageChunk"})
"""Its `name` is required: a message stored without one is built without validation,
and without the attribute LangChain reads."""


class _Unbounded(Exception):
    """The fields do not say what LangChain would count: load the head."""


def history_bound(messages: Any) -> int | None:
    """At least `count_tokens_approximately` of the messages the saver builds from
    `messages` (decoded by `plain.decode_plain`); None where that cannot be told.
    A plain loop: on the short histories most heads hold, passes over all messages at
    once cost more than they save."""
    if type(messages) is not list:
        return None
    total = 0
    try:
        for item in messages:
            if type(item) is not tuple:
                return None
            total += _message_bound(*item)
    except (_Unbounded, TypeError):  # TypeError: a class name that is not a string, say
        return None
    return total


def _message_bound(name: str, fields: Any) -> int:
    role = _ROLE_CHARS.get(name)
    if role is None or type(fields) is not dict:
        raise _Unbounded
    content = fields.get("content")
    if type(content) is not str:  # blocks: LangChain before 1.1 counts the list's repr
        raise _Unbounded  # and later ones block by block: the full load counts as installed
    chars = len(content) + (_calls_chars(fields) if name in _AI else 0)
    chars += role if role >= 0 else _role_chars(name, fields)
    called = fields.get("name")
    if type(called) is str:
        chars += len(called)
    elif called is not None or name in _FUNCTION:
        raise _Unbounded
    if name in _TOOL:
        call_id = fields.get("tool_call_id")
        if type(call_id) is not str:
            raise _Unbounded
        chars += len(call_id)
    return -(-chars // CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE


def _role_chars(name: str, fields: dict[str, Any]) -> int:
    """A system message's role may be set in `additional_kwargs`; a chat message's is
    its `role`. Either must be a string."""
    role = (
        _extras(fields).get(_OPENAI_ROLE, _SYSTEM_ROLE) if name in _SYSTEM else fields.get("role")
    )
    if type(role) is not str:
        raise _Unbounded
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
    return len(repr(calls)) + CALL_TYPE_CHARS * len(calls)
