"""A scripted chat model for the examples: no network, no API key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class ScriptedModel(GenericFakeChatModel):
    """Answers with the given messages in turn; accepts tools like a real model."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self


def scripted(*replies: AIMessage | str) -> ScriptedModel:
    return ScriptedModel(messages=iter(replies))


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    """An assistant turn asking for one tool call."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])
