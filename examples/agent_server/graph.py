"""A small agent for the Agent Server example: a scripted model, no API key.

Compiled without a checkpointer: the server supplies one (ours, per langgraph.json).
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent


class WeatherModel(GenericFakeChatModel):
    """Asks for the weather tool when the user mentions weather; otherwise answers."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> WeatherModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage) and "weather" in str(last.content):
            call = {"name": "get_weather", "args": {"city": "Paris"}, "id": f"call-{len(messages)}"}
            reply = AIMessage("", tool_calls=[call])
        elif isinstance(last, ToolMessage):
            reply = AIMessage(f"Here it is: {last.content}")
        else:
            reply = AIMessage("Happy to help with something else.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"It is sunny in {city}."


agent = create_react_agent(WeatherModel(messages=iter(())), [get_weather])
