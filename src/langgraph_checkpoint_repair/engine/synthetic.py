"""Synthetic tool results: how they are built and how they are recognised."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, ToolMessage

from .policy import PendingCall, RepairPolicy

MARKER_KEY = "langgraph_checkpoint_repair"
"""Key in `response_metadata` that marks a ToolMessage as written by this library."""


def is_synthetic(message: BaseMessage) -> bool:
    """True for a result this library made up, which any real result outranks."""
    metadata = message.response_metadata
    return bool(metadata) and isinstance(metadata.get(MARKER_KEY), dict)


def placeholder_id(call_id: str, ai_id: str | None) -> str:
    """A deterministic message id, unique even when a model reuses call ids."""
    return f"repair-{call_id}" if not ai_id else f"repair-{call_id}-{ai_id}"


def make_placeholder(call: PendingCall, policy: RepairPolicy) -> ToolMessage:
    """The synthetic error result that answers a call which never got one."""
    return ToolMessage(
        content=policy.placeholder_text(call),
        tool_call_id=call.id,
        name=call.name,
        status="error",
        id=placeholder_id(call.id, call.ai_message.id),
        response_metadata={MARKER_KEY: {"synthetic": True, "reason": call.reason}},
    )
