"""The graphs the Agent Server tests serve: prebuilt agents over a fake chat model.

Compiled without a checkpointer: the server supplies it. Every tool run is
appended to the file named by TOOL_RUNS_FILE, so a test can count them.
"""

from __future__ import annotations

import os
from typing import Any

from deepagents import create_deep_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from langgraph.types import interrupt


class ConversationModel(GenericFakeChatModel):
    """Calls a tool when the latest human message asks for one; otherwise answers."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ConversationModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        text = str(last.content)
        call_id = f"call-{len(messages)}"
        if isinstance(last, HumanMessage) and "weather" in text:
            reply = AIMessage(
                "", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": call_id}]
            )
        elif isinstance(last, HumanMessage) and "approve" in text:
            reply = AIMessage("", tool_calls=[{"name": "ask_human", "args": {}, "id": call_id}])
        elif isinstance(last, ToolMessage):
            reply = AIMessage(f"Done: {text}")
        else:
            reply = AIMessage("Hello again.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def record(name: str) -> None:
    with open(os.environ["TOOL_RUNS_FILE"], "a") as runs:
        runs.write(f"{name}\n")


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    record("get_weather")
    return f"sunny in {city}"


@tool
def ask_human() -> str:
    """Ask a person to approve, then report the answer."""
    answer = interrupt("approve?")
    record("ask_human")
    return f"human said {answer}"


model = ConversationModel(messages=iter(()))
before_tools = create_react_agent(model, [get_weather, ask_human], interrupt_before=["tools"])
agent = create_react_agent(model, [get_weather, ask_human])


class ReusedIdModel(ConversationModel):
    """Names every call `call_0`, as some models do, and rejects a broken history
    as a provider would (HTTP 400): the deep agent's thread is then bricked."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        unanswered = _unanswered_calls(messages)
        if unanswered:
            raise ValueError(f"400: tool calls without results: {unanswered}")
        last = messages[-1]
        if isinstance(last, HumanMessage) and "weather" in str(last.content):
            call = {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_0"}
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))]
            )
        return super()._generate(messages, *args, **kwargs)


def _unanswered_calls(messages: list[BaseMessage]) -> list[str]:
    waiting: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id in waiting:
            waiting.remove(message.tool_call_id)
        elif waiting:
            return waiting
        elif isinstance(message, AIMessage):
            waiting = [str(call["id"]) for call in message.tool_calls]
    return waiting


deep_agent = create_deep_agent(
    model=ReusedIdModel(messages=iter(())),
    tools=[get_weather],
    interrupt_on={"get_weather": True},
)
