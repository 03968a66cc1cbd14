"""OpenAI reasoning and call blocks: what the Responses API (R1-R4) and Chat
Completions (O1) reject once the converter has sent them."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from ...codes import ActionKind
from .fixes import Block, Fix, block_type, drop_blocks, model_provider

REASONING_KEY = "reasoning"
"""v0.3 ChatOpenAI messages keep their reasoning item in `additional_kwargs` under this key."""

_CHAT_REJECTS = ("reasoning", "redacted_thinking")
_CALL_BLOCKS = {"function_call": "call_id", "custom_tool_call": "call_id", "tool_call": "id"}
_OUTPUT_ITEMS = frozenset(
    {
        "refusal",
        "function_call",
        "custom_tool_call",
        "tool_call",
        "compaction",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "tool_search_call",
        "tool_search_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "image_generation_call",
    }
)
"""Content blocks the Responses converter sends as an item that may follow reasoning."""


def drop_chat_rejected_blocks(message: AIMessage) -> tuple[AIMessage, list[Fix]]:
    """O1: the Chat converter forwards `reasoning` and `redacted_thinking` blocks; the API
    rejects them."""
    return drop_blocks(message, _chat_fault)


def _chat_fault(block: Block) -> Fix | None:
    kind = block_type(block)
    if kind not in _CHAT_REJECTS:
        return None
    dropped: ActionKind = "reasoning_dropped" if kind == "reasoning" else "thinking_dropped"
    return Fix(dropped, f"{kind} block, which Chat Completions rejects")


def drop_stale_call_blocks(message: AIMessage) -> tuple[AIMessage, list[Fix]]:
    """A call block whose call is gone from `tool_calls` (a dropped call) would still be
    sent by the Responses converter, as a call that nothing answers."""
    if not isinstance(message.content, list):
        return message, []
    live = {c.get("id") for c in message.tool_calls} | {
        c.get("id") for c in message.invalid_tool_calls
    }

    def stale(block: Block) -> Fix | None:
        key = _CALL_BLOCKS.get(block_type(block) or "")
        call_id = block.get(key) if key else None
        if key is None or call_id in live:
            return None
        name = block.get("name")
        return Fix(
            "call_block_dropped",
            f"{block_type(block)} block of a call that is no longer in tool_calls",
            call_id if isinstance(call_id, str) else None,
            name if isinstance(name, str) else None,
        )

    return drop_blocks(message, stale)


def drop_foreign_reasoning(message: AIMessage) -> tuple[AIMessage, list[Fix]]:
    """R3: another provider's reasoning, or a block with neither an id nor encrypted
    content, is sent as a malformed reasoning item."""
    provider = model_provider(message)
    foreign = provider is not None and provider != "openai"

    def fault(block: Block) -> Fix | None:
        if block_type(block) != "reasoning":
            return None
        if foreign:
            return Fix("reasoning_dropped", f"reasoning block of a {provider} message")
        if not _replayable(block):
            return Fix("reasoning_dropped", "reasoning block with no id and no encrypted content")
        return None

    message, fixes = drop_blocks(message, fault)
    stored = message.additional_kwargs.get(REASONING_KEY)
    if isinstance(stored, dict) and (foreign or not _replayable(stored)):
        message = _without_stored_reasoning(message)
        fixes.append(Fix("reasoning_dropped", "reasoning item the Responses API cannot replay"))
    return message, fixes


def _replayable(reasoning: dict[str, Any]) -> bool:
    return bool(reasoning.get("id") or reasoning.get("encrypted_content"))


UNFOLLOWED = Fix("reasoning_dropped", "reasoning item without its following item")


def drop_unfollowed_reasoning(message: AIMessage) -> tuple[AIMessage, list[Fix]]:
    """R1: a reasoning item must be followed, within its message, by the item it led to;
    one left last (a cut stream, a dropped call) is removed. R2: any other stays."""
    blocks = message.content if isinstance(message.content, list) else []
    if REASONING_KEY not in message.additional_kwargs and not any(
        block_type(b) == "reasoning" for b in blocks
    ):
        return message, []
    calls_follow = _calls_sent_after_content(message, blocks)
    message, fixes = (message, []) if calls_follow else _without_trailing(message, blocks)
    if _stored_reasoning_unfollowed(message, blocks, calls_follow):
        message = _without_stored_reasoning(message)
        fixes.append(UNFOLLOWED)
    return message, fixes


def _without_trailing(message: AIMessage, blocks: list[Any]) -> tuple[AIMessage, list[Fix]]:
    """`message` without the reasoning blocks after its last output item."""
    last_output = max((n for n, block in enumerate(blocks) if _is_output(block)), default=-1)
    trailing = {n for n, b in enumerate(blocks) if n > last_output and block_type(b) == "reasoning"}
    if not trailing:
        return message, []
    kept = [b for n, b in enumerate(blocks) if n not in trailing]
    return message.model_copy(update={"content": kept}), [UNFOLLOWED] * len(trailing)


def _calls_sent_after_content(message: AIMessage, blocks: list[Any]) -> bool:
    """True when the converter appends a function_call item after the content's items."""
    in_content = {
        b.get(key) for b in blocks if (key := _CALL_BLOCKS.get(block_type(b) or "")) is not None
    }
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    return any(c.get("id") not in in_content for c in calls)


def _is_output(block: object) -> bool:
    kind = block_type(block)
    if kind in ("text", "output_text"):
        return isinstance(block, dict) and block.get("text") is not None
    return kind in _OUTPUT_ITEMS


def _stored_reasoning_unfollowed(message: AIMessage, blocks: list[Any], calls: bool) -> bool:
    """A v0.3 reasoning item goes first; any text, refusal, call or tool output follows it."""
    if not isinstance(message.additional_kwargs.get(REASONING_KEY), dict):
        return False
    if not isinstance(message.content, list) or calls or message.tool_calls:
        return False
    extras = ("refusal", "tool_outputs")
    followed = any(_is_output(b) for b in blocks) or any(
        message.additional_kwargs.get(key) for key in extras
    )
    return not followed


def _without_stored_reasoning(message: AIMessage) -> AIMessage:
    kwargs = {k: v for k, v in message.additional_kwargs.items() if k != REASONING_KEY}
    return message.model_copy(update={"additional_kwargs": kwargs})
