"""The only fake in the suite: a chat model that checks histories like a provider."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatResult
from pydantic import Field

from tests.support.oracle import violations


class ProviderRejected(Exception):
    """What a provider's HTTP 400 for a broken tool-call history becomes."""


class CheckingModel(GenericFakeChatModel):
    """Answers with scripted messages, unless `rejection` finds the history unacceptable;
    records every history it saw. Subclasses say what a given provider refuses."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> CheckingModel:
        return self

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        return None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        error = self.rejection(messages)
        if error is not None:
            raise error
        return super()._generate(messages, stop, run_manager, **kwargs)


class ProviderModel(CheckingModel):
    """Rejects a history that breaks the tool-call pairing rules, as providers do."""

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        problems = violations(messages)
        return ProviderRejected(f"400 invalid tool-call history: {problems}") if problems else None


def model(*replies: AIMessage | str) -> ProviderModel:
    return ProviderModel(messages=iter(replies))


def calls(*names_and_ids: tuple[str, str], **args: Any) -> AIMessage:
    """An assistant turn asking for several tool calls at once."""
    return AIMessage(
        "", tool_calls=[{"name": n, "args": dict(args), "id": i} for n, i in names_and_ids]
    )


class WindowModel(ProviderModel):
    """A provider with a context window: a prompt over `window` tokens (as LangChain's
    approximation counts them) is refused with Anthropic's words, on every call."""

    window: int = 200_000

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        tokens = count_tokens_approximately(messages)
        if tokens > self.window:
            return ProviderRejected(
                f"400 prompt is too long: {tokens} tokens > {self.window} maximum"
            )
        return super().rejection(messages)


def window_model(window: int, *replies: AIMessage | str) -> WindowModel:
    return WindowModel(messages=iter(replies), window=window)
