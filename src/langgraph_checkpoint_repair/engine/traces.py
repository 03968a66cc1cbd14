"""Every place an AIMessage carries a tool call, so a removed call leaves no trace.

Provider converters read calls from `tool_calls` and `invalid_tool_calls`, and
also from content blocks (Anthropic `tool_use`, OpenAI Responses
`function_call` / `custom_tool_call`, LangChain standard `tool_call`) and the
legacy `additional_kwargs["tool_calls"]`. A call left in any of them is sent
without its result: HTTP 400. Blocks of calls that stay are never rewritten.

The Responses API also rejects a `reasoning` item that lost the items after
it, so reasoning whose every following item was a removed call goes too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from .calls import Call

FUNCTION_CALL_IDS_KEY = "__openai_function_call_ids__"
"""langchain-openai's map from call id to Responses item id (its v0.3 format)."""

_CALL_BLOCKS: dict[str, tuple[str, str]] = {
    "tool_use": ("anthropic", "id"),
    "function_call": ("responses", "call_id"),
    "custom_tool_call": ("responses", "call_id"),
    "tool_call": ("standard", "id"),
    "invalid_tool_call": ("standard", "id"),
    "tool_call_chunk": ("standard", "id"),
}
"""Block type -> (family, key holding the call id). One call has one block per family."""


def block_call(block: object) -> tuple[str, str] | None:
    """(family, call id) of a content block carrying a tool call, else None."""
    if not isinstance(block, dict):
        return None
    block_type = block.get("type")
    if block_type == "non_standard":
        value = block.get("value")
        return block_call(value) if isinstance(value, dict) else None
    where = _CALL_BLOCKS.get(block_type) if isinstance(block_type, str) else None
    call_id = block.get(where[1]) if where else None
    return (where[0], call_id) if where and isinstance(call_id, str) else None


def without_calls(message: AIMessage, removed: Sequence[Call]) -> AIMessage:
    """A copy of `message` without the `removed` calls, wherever a converter reads them.

    A removed duplicate shares its id with a call that stays: the first trace
    of that id in each place is the one kept.
    """
    gone = {(c.invalid, c.position) for c in removed}
    tool_calls = [c for n, c in enumerate(message.tool_calls) if (False, n) not in gone]
    invalid = [c for n, c in enumerate(message.invalid_tool_calls) if (True, n) not in gone]
    kept = {c.get("id") for c in tool_calls} | {c.get("id") for c in invalid}
    ids = {c.id for c in removed}
    update: dict[str, Any] = {"tool_calls": tool_calls, "invalid_tool_calls": invalid}
    content = message.content
    if isinstance(content, list):
        content = _without_call_blocks(content, ids, kept)
        if len(content) != len(message.content):
            update["content"] = content
    kwargs = _without_raw_calls(message.additional_kwargs, ids, kept)
    if kwargs is not message.additional_kwargs:
        update["additional_kwargs"] = kwargs
    if "reasoning" in kwargs and not _follows_reasoning(content, kwargs, bool(kept)):
        update["additional_kwargs"] = {k: v for k, v in kwargs.items() if k != "reasoning"}
    return message.model_copy(update=update)


def _without_call_blocks(blocks: list[Any], ids: set[str], kept: Collection[Any]) -> list[Any]:
    """The blocks minus those of removed calls and the reasoning that only led to them."""
    seen: set[tuple[str, str]] = set()
    dropped = [False] * len(blocks)
    for n, block in enumerate(blocks):
        key = block_call(block)
        if key is None or key[1] not in ids:
            continue
        dropped[n] = key in seen or key[1] not in kept
        seen.add(key)
    if not any(dropped):
        return blocks
    _drop_orphaned_reasoning(blocks, dropped)
    return [b for b, drop in zip(blocks, dropped, strict=True) if not drop]


def _drop_orphaned_reasoning(blocks: list[Any], dropped: list[bool]) -> None:
    """Mark a run of reasoning blocks dropped when every block it led to is dropped."""
    n = 0
    while n < len(blocks):
        if not _is_reasoning(blocks[n]):
            n += 1
            continue
        start = n
        while n < len(blocks) and _is_reasoning(blocks[n]):
            n += 1
        end = n
        while end < len(blocks) and not _is_reasoning(blocks[end]):
            end += 1
        if end > n and all(dropped[n:end]):
            dropped[start:n] = [True] * (n - start)
        n = end


def _is_reasoning(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "reasoning"


def _without_raw_calls(
    kwargs: dict[str, Any], ids: set[str], kept: Collection[Any]
) -> dict[str, Any]:
    """`additional_kwargs` without the removed calls' legacy entries (the same dict if none)."""
    update: dict[str, Any] = {}
    raw_calls = kwargs.get("tool_calls")
    if isinstance(raw_calls, list):
        seen: set[str] = set()
        kept_raw = []
        for raw in raw_calls:
            call_id = raw.get("id") if isinstance(raw, dict) else None
            if isinstance(call_id, str) and call_id in ids:
                if call_id in seen or call_id not in kept:
                    continue
                seen.add(call_id)
            kept_raw.append(raw)
        if len(kept_raw) != len(raw_calls):
            update["tool_calls"] = kept_raw
    item_ids = kwargs.get(FUNCTION_CALL_IDS_KEY)
    if isinstance(item_ids, dict) and any(i in item_ids and i not in kept for i in ids):
        update[FUNCTION_CALL_IDS_KEY] = {
            k: v for k, v in item_ids.items() if k not in ids or k in kept
        }
    return {**kwargs, **update} if update else kwargs


def _follows_reasoning(content: object, kwargs: dict[str, Any], has_calls: bool) -> bool:
    """Whether langchain-openai's v0.3 format would still send an item after the
    reasoning it keeps in `additional_kwargs`."""
    if has_calls or kwargs.get("refusal") or kwargs.get("tool_outputs"):
        return True
    if not isinstance(content, list):
        return True  # the v0.3 format needs a list; a text content sends no reasoning item
    return any(isinstance(b, dict) and b.get("type") == "text" for b in content)
