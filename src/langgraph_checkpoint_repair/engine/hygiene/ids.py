"""Tool-call ids (I1-I3): unique across the history and within the provider's charset
and length, renamed deterministically and everywhere the id lives at once.

The first occurrence of an id keeps it; later ones are renamed, so repairing a
thread up to some message yields a prefix of repairing the whole thread. New
ids come from sha256 of the old id and its occurrence: the same in every
process, under any PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from ..policy import Provider
from .fixes import Fix, block_type

FUNCTION_CALL_IDS_KEY = "__openai_function_call_ids__"
"""`additional_kwargs` map from call id to the Responses `fc_` item id."""

_BEDROCK_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ID_RULES: dict[Provider, Callable[[str], bool]] = {
    "openai": lambda call_id: len(call_id) <= 40,
    "openai-responses": lambda call_id: len(call_id) <= 64,
    "bedrock": lambda call_id: _BEDROCK_ID.fullmatch(call_id) is not None,
}
"""Ids each provider accepts as sent. Anthropic's charset and Mistral's 9-character
format are absent: their converters map every id on both sides already."""

_ID_KEYS = {
    "tool_use": "id",
    "tool_call": "id",
    "invalid_tool_call": "id",
    "function_call": "call_id",
    "custom_tool_call": "call_id",
}
"""Content blocks that carry a call id, and the key it is under."""


@dataclass
class IdLedger:
    """The call ids seen so far in the walk, and how often each original id occurred."""

    provider: Provider
    taken: set[str] = field(default_factory=set)
    occurrences: Counter[str] = field(default_factory=Counter)

    def renames_for(self, message: AIMessage) -> dict[str, str]:
        """Old id -> new id for the calls of `message` that repeat an id or break the rule."""
        renames: dict[str, str] = {}
        if not (message.tool_calls or message.invalid_tool_calls):
            return renames
        for call_id in _unique(_call_ids(message)):
            occurrence = self.occurrences[call_id]
            self.occurrences[call_id] += 1
            if call_id in self.taken or not self._accepts(call_id):
                renames[call_id] = self._new_id(call_id, occurrence)
            self.taken.add(renames.get(call_id, call_id))
        return renames

    def _accepts(self, call_id: str) -> bool:
        rule = ID_RULES.get(self.provider)
        return rule is None or rule(call_id)

    def _new_id(self, call_id: str, occurrence: int) -> str:
        salt = 0
        while (new := derived_id(call_id, occurrence, salt)) in self.taken:
            salt += 1
        return new


def derived_id(call_id: str, occurrence: int, salt: int = 0) -> str:
    """`call_` and 24 hex digits: valid for every provider, stable across processes."""
    digest = hashlib.sha256(f"{call_id}\x00{occurrence}\x00{salt}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def _unique(call_ids: list[str]) -> list[str]:
    """A repeat inside one message is the pairing rules' to remove, not ours to rename."""
    return list(dict.fromkeys(call_ids))


def _call_ids(message: AIMessage) -> list[str]:
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    return [c["id"] for c in calls if isinstance(c.get("id"), str) and c["id"]]


def rename_calls(message: AIMessage, renames: dict[str, str]) -> tuple[AIMessage, list[Fix]]:
    """`message` with its calls renamed in tool_calls, content blocks and additional_kwargs."""
    update: dict[str, Any] = {
        "tool_calls": [_renamed(c, "id", renames) for c in message.tool_calls],
        "invalid_tool_calls": [_renamed(c, "id", renames) for c in message.invalid_tool_calls],
        "additional_kwargs": _renamed_kwargs(message.additional_kwargs, renames),
    }
    if isinstance(message.content, list):
        update["content"] = [_renamed_block(b, renames) for b in message.content]
    chunks = getattr(message, "tool_call_chunks", None)
    if isinstance(chunks, list):
        update["tool_call_chunks"] = [_renamed(c, "id", renames) for c in chunks]
    names = {c.get("id"): c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]}
    fixes = [
        Fix("id_renamed", f"renamed to {new}", old, _text_or_none(names.get(old)))
        for old, new in renames.items()
    ]
    return message.model_copy(update=update), fixes


def rename_result(message: ToolMessage, renames: dict[str, str]) -> ToolMessage:
    """The result of a renamed call, under the call's new id (no action of its own)."""
    new = renames.get(message.tool_call_id)
    return message if new is None else message.model_copy(update={"tool_call_id": new})


def _renamed(entry: Any, key: str, renames: dict[str, str]) -> Any:
    old = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(old, str) or old not in renames:
        return entry
    return {**entry, key: renames[old]}


def _renamed_block(block: Any, renames: dict[str, str]) -> Any:
    key = _ID_KEYS.get(block_type(block) or "")
    return block if key is None else _renamed(block, key, renames)


def _renamed_kwargs(kwargs: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """Raw OpenAI `tool_calls` renamed; the `fc_` item map re-keyed so the item id stays."""
    update: dict[str, Any] = {}
    raw_calls = kwargs.get("tool_calls")
    if isinstance(raw_calls, list):
        update["tool_calls"] = [_renamed(c, "id", renames) for c in raw_calls]
    item_ids = kwargs.get(FUNCTION_CALL_IDS_KEY)
    if isinstance(item_ids, dict):
        update[FUNCTION_CALL_IDS_KEY] = {renames.get(k, k): v for k, v in item_ids.items()}
    return {**kwargs, **update} if update else kwargs


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
