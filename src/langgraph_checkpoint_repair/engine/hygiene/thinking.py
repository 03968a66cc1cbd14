"""Anthropic thinking blocks (T1, T2): what Claude cannot verify is removed, never
turned into text; signed blocks of Anthropic messages are never touched (T3).

Valid thinking is not stripped after our own edits either (T4): Claude binds a
signed block to its prefix, and the engine keeps each thread's prefix stable
instead (deterministic, idempotent, prefix-stable output).
"""

from __future__ import annotations

from langchain_core.messages import AIMessage

from ...codes import ActionKind
from .fixes import Block, Fix, block_type, drop_blocks, model_provider

_FOREIGN_REASONING = ("thinking", "redacted_thinking", "reasoning_content")


def drop_unverifiable_thinking(message: AIMessage) -> tuple[AIMessage, list[Fix]]:
    """Unsigned blocks (a stream cut mid-thought) and another provider's reasoning
    (a Gemini thought signature, Bedrock `reasoning_content`) both fail Claude's check."""
    provider = model_provider(message)
    foreign = provider is not None and provider != "anthropic"
    return drop_blocks(message, lambda block: _fault(block, provider if foreign else None))


def _fault(block: Block, foreign_provider: str | None) -> Fix | None:
    kind = block_type(block)
    if foreign_provider is not None and kind in _FOREIGN_REASONING:
        dropped: ActionKind = (
            "reasoning_dropped" if kind == "reasoning_content" else "thinking_dropped"
        )
        return Fix(dropped, f"{kind} block of a {foreign_provider} message")
    if kind == "thinking" and not _non_empty_text(block.get("signature")):
        return Fix("thinking_dropped", "thinking block without a signature")
    if kind == "redacted_thinking" and not _non_empty_text(block.get("data")):
        return Fix("thinking_dropped", "redacted_thinking block without data")
    return None


def _non_empty_text(value: object) -> bool:
    return isinstance(value, str) and value != ""
