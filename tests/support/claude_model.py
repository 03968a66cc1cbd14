"""A chat model that checks its input the way Anthropic's Messages API does.

It formats the history with langchain-anthropic's own converter and rejects it
with the API's error text; the scripted replies come from GenericFakeChatModel.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from tests.support.fakes import CheckingModel
from tests.support.mixed_histories import CLAUDE_SIGNATURE
from tests.support.oracle import anthropic_request
from tests.support.provider_oracle import anthropic_request_problems

INVALID_SIGNATURE = "Invalid `signature` in `thinking` block"


class AnthropicBadRequest(Exception):
    """What the API's HTTP 400 `invalid_request_error` becomes."""


class ClaudeLikeModel(CheckingModel):
    """Rejects what Claude would, with the API's error text."""

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        for problem in _signature_problems(messages) or anthropic_request_problems(messages):
            return AnthropicBadRequest(f"Error code: 400 - {problem}")
        return None


def _signature_problems(messages: list[BaseMessage]) -> list[str]:
    """Claude verifies every thinking block's signature (ours: minted by this test suite)."""
    payload = anthropic_request(messages)
    return [
        f"messages.{n}.content.{m}: {INVALID_SIGNATURE}"
        for n, turn in enumerate(payload)
        for m, block in enumerate(turn["content"] if isinstance(turn["content"], list) else [])
        if isinstance(block, dict)
        and block.get("type") == "thinking"
        and not str(block.get("signature", "")).startswith(CLAUDE_SIGNATURE)
    ]


def claude(*replies: AIMessage) -> ClaudeLikeModel:
    return ClaudeLikeModel(messages=iter(replies))


def reply(
    text: str, *, signature: str | None, thought: str = "The user asks about the weather."
) -> AIMessage:
    """A Claude reply with a thinking block; `signature=None` is a stream cut mid-thought."""
    thinking: dict[str, Any] = {"type": "thinking", "thinking": thought}
    if signature is not None:
        thinking["signature"] = signature
    return AIMessage(
        [thinking, {"type": "text", "text": text}],
        response_metadata={"model_provider": "anthropic"},
    )
