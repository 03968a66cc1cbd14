"""Real graphs whose `messages` is a LangGraph `DeltaChannel`: a hand-built agent with
either LangGraph's or deepagents' reducer, and deepagents' own `create_deep_agent`."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from deepagents import create_deep_agent
from deepagents._messages_reducer import _messages_delta_reducer as deepagents_reducer
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer as langgraph_reducer
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from tests.support.agents import ToolBox
from tests.support.fakes import ProviderModel

Reducer = Callable[[Any, Sequence[Any]], Any]
REDUCERS: dict[str, Any] = {"langgraph": langgraph_reducer, "deepagents": deepagents_reducer}
SNAPSHOT_EVERY = 3
"""Small, so that a few turns cross a snapshot boundary."""


def delta_state(reducer: Reducer, every: int = SNAPSHOT_EVERY) -> Any:
    """A state whose `messages` is a delta channel with `reducer`."""
    channel: DeltaChannel[Any] = DeltaChannel(reducer, snapshot_frequency=every)
    fields = {"messages": Annotated[list[AnyMessage], channel]}
    return TypedDict("DeltaState", fields)  # type: ignore[operator]


def delta_agent(
    model: ProviderModel,
    box: ToolBox,
    saver: BaseCheckpointSaver[Any] | None,
    *,
    reducer: str = "deepagents",
    interrupt_before: list[str] | None = None,
    raise_tool_errors: bool = False,
) -> CompiledStateGraph[Any]:
    """A model node and a tool node over a delta `messages` channel; the model sees
    every history as a provider would (and rejects a broken one)."""

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(delta_state(REDUCERS[reducer]))
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(box.all, handle_tool_errors=not raise_tool_errors))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver, interrupt_before=interrupt_before)


def delta_chat(saver: Any, reducer: str = "deepagents") -> CompiledStateGraph[Any]:
    """A one-node chat graph over a delta channel; after an update as "chat" nothing is due."""
    builder = StateGraph(delta_state(REDUCERS[reducer]))
    builder.add_node("chat", lambda state: {"messages": [AIMessage("hi")]})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def deep_agent(
    model: ProviderModel,
    box: ToolBox,
    saver: BaseCheckpointSaver[Any] | None,
    *,
    interrupt_on: dict[str, Any] | None = None,
    middleware: Sequence[Any] = (),
) -> CompiledStateGraph[Any]:
    """deepagents' own agent, with our fake provider as its model."""
    graph: CompiledStateGraph[Any] = create_deep_agent(
        model=model,
        tools=box.all[:1],
        checkpointer=saver,
        interrupt_on=interrupt_on,
        middleware=middleware,
    )
    return graph
