"""What one hygiene rule did to one message, before it gets its place in the history."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from ...codes import ActionKind


@dataclass(frozen=True)
class Fix:
    """A change a rule made; the walk turns it into a `RepairAction` with its index."""

    kind: ActionKind
    detail: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None


Block = dict[str, Any]
BlockFault = Callable[[Block], Fix | None]
"""Why a content block must go (a Fix), or None to keep it."""


def block_type(block: object) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    return kind if isinstance(kind, str) else None


def model_provider(message: BaseMessage) -> str | None:
    """The provider that produced `message`, as LangChain's chat models record it."""
    provider = message.response_metadata.get("model_provider")
    return provider if isinstance(provider, str) and provider else None


def drop_blocks(message: AIMessage, fault: BlockFault) -> tuple[AIMessage, list[Fix]]:
    """`message` without the content blocks `fault` objects to; the same object if none."""
    if not isinstance(message.content, list):
        return message, []
    kept: list[str | dict[Any, Any]] = []
    fixes: list[Fix] = []
    for block in message.content:
        fix = fault(block) if isinstance(block, dict) else None
        if fix is None:
            kept.append(block)
        else:
            fixes.append(fix)
    if not fixes:
        return message, []
    return message.model_copy(update={"content": kept}), fixes
