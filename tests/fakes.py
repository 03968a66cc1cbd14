"""The only fake in the suite: a chat model that checks histories like a provider."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from tests.oracle import violations


class ProviderRejected(Exception):
    """What a provider's HTTP 400 for a broken tool-call history becomes."""


class ProviderModel(GenericFakeChatModel):
    """Answers with scripted messages; rejects invalid histories; records what it saw."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ProviderModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        problems = violations(messages)
        if problems:
            raise ProviderRejected(f"400 invalid tool-call history: {problems}")
        return super()._generate(messages, stop, run_manager, **kwargs)


def model(*replies: AIMessage | str) -> ProviderModel:
    return ProviderModel(messages=iter(replies))


def calls(*names_and_ids: tuple[str, str], **args: Any) -> AIMessage:
    """An assistant turn asking for several tool calls at once."""
    return AIMessage(
        "", tool_calls=[{"name": n, "args": dict(args), "id": i} for n, i in names_and_ids]
    )
