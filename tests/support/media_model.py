"""Chat models that refuse media the way a provider's API does.

Each formats the history with the provider's own LangChain converter, then checks
what it would send: Anthropic's 5 MB limit on an image's base64 text (anywhere,
tool results included), and OpenAI Chat Completions' text-only tool messages.
The scripted replies come from GenericFakeChatModel.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_openai.chat_models.base import _convert_message_to_dict

from tests.support.claude_model import AnthropicBadRequest, ClaudeLikeModel
from tests.support.fakes import CheckingModel, ProviderModel
from tests.support.oracle import anthropic_request

ANTHROPIC_IMAGE_BYTES = 5 * 1024 * 1024
ANTHROPIC_IMAGE_SIDE = 8000


class OpenAIBadRequest(Exception):
    """What Chat Completions' HTTP 400 `invalid_request_error` becomes."""


class MediaClaude(ClaudeLikeModel, ProviderModel):
    """Claude, also refusing an image whose base64 text is over 5 MB (a ProviderModel
    as well, for the agents that take one; Claude's checks replace its own)."""

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        error = super().rejection(messages)
        if error is not None:
            return error
        for where, block in _anthropic_blocks(anthropic_request(messages)):
            source = block.get("source")
            if block.get("type") not in ("image", "document") or not isinstance(source, dict):
                continue
            if source.get("type") != "base64":
                continue
            data = str(source.get("data", ""))
            if block["type"] == "image" and len(data) > ANTHROPIC_IMAGE_BYTES:
                return AnthropicBadRequest(
                    f"Error code: 400 - {where}.image.source.base64: image exceeds 5 MB "
                    f"maximum: {len(data)} bytes > {ANTHROPIC_IMAGE_BYTES} bytes"
                )
        return None


def _anthropic_blocks(payload: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(`messages.N.content.M[.content.K]`, block) for every block, inside tool results too."""
    for n, turn in enumerate(payload):
        content = turn["content"]
        for m, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            where = f"messages.{n}.content.{m}"
            yield where, block
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for k, nested in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(nested, dict):
                    yield f"{where}.content.{k}", nested


class OpenAIChatLike(CheckingModel):
    """Chat Completions: a tool message's content parts may only be text."""

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        for n, message in enumerate(messages):
            item = _convert_message_to_dict(message)
            content = item.get("content")
            if item["role"] != "tool" or not isinstance(content, list):
                continue
            for m, part in enumerate(content):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind != "text":
                    return OpenAIBadRequest(
                        f"Error code: 400 - Invalid value: '{kind}'. Supported values are: "
                        f"'text'. (param: messages[{n}].content[{m}].type)"
                    )
        return None


def media_claude(*replies: AIMessage | str) -> MediaClaude:
    return MediaClaude(messages=iter(replies))


def openai_chat(*replies: AIMessage | str) -> OpenAIChatLike:
    return OpenAIChatLike(messages=iter(replies))
