"""Real graphs whose `messages` is a LangGraph `DeltaChannel`: a hand-built agent with
either LangGraph's or deepagents' reducer, and deepagents' own `create_deep_agent`; the
threads the tests brick through them, and the updates a valid thread is built from."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from deepagents import create_deep_agent
from deepagents._messages_reducer import _messages_delta_reducer as deepagents_reducer
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.message import _messages_delta_reducer as langgraph_reducer
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Overwrite
from typing_extensions import TypedDict

from tests.support.agents import ToolBox
from tests.support.fakes import ProviderModel, ProviderRejected, calls, model
from tests.support.histories import ai, human, tool
from tests.support.stores import Store

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


async def messages_of(store: Store, graph: CompiledStateGraph[Any], config: Any) -> list[Any]:
    return list((await store.get_state(graph, config)).values.get("messages", []))


async def brick_delta_agent(store: Store, reducer: str, config: Any) -> None:
    """Two clean turns (past a snapshot), then new input while interrupted before the tools."""
    replies = model(
        "Hello.", calls(("get_weather", "c1"), city="Oslo"), "Sunny.",
        calls(("get_weather", "c2"), city="Rome"),
    )  # fmt: skip
    agent = delta_agent(replies, ToolBox(), store.saver, reducer=reducer, interrupt_before=None)
    await store.invoke(agent, {"messages": [HumanMessage("Hi")]}, config)
    await store.invoke(agent, {"messages": [HumanMessage("Weather in Oslo?")]}, config)
    waiting = delta_agent(
        replies, ToolBox(), store.saver, reducer=reducer, interrupt_before=["tools"]
    )
    await store.invoke(waiting, {"messages": [HumanMessage("And Rome?")]}, config)
    with pytest.raises(ProviderRejected):
        await store.invoke(waiting, {"messages": [HumanMessage("Never mind.")]}, config)


VALID_UPDATES: dict[str, list[Any]] = {
    "appends_across_snapshots": [
        [human("a"), ai("a1", "c1"), tool("c1")],
        [ai("a2", text="done")],
        [human("b")],
        [ai("a3", "c2"), tool("c2")],
        [ai("a4", text="ok")],
    ],
    "remove_by_id_and_replace": [
        [human("a"), ai("a1", text="draft")],
        [RemoveMessage(id="a1")],
        [ai("a1", text="final"), human("b")],
        [ai("a2", text="ok")],
    ],
    "overwrite": [
        [human("a"), ai("a1", text="x")],
        Overwrite([human("b"), ai("b1", text="y")]),
        [human("c")],
    ],
}


async def brick_deep_agent_by_a_trim(store: Store, config: Any, replies: ProviderModel) -> None:
    """A turn, then a trim (deepagents' own `REMOVE_ALL_MESSAGES` form) that keeps a tool
    result without its call: the provider rejects the next run, and every one after."""
    agent = deep_agent(replies, ToolBox(), store.saver)
    await store.invoke(agent, {"messages": [HumanMessage("Hi")]}, config)
    trimmed = [RemoveMessage(id=REMOVE_ALL_MESSAGES), tool("zz"), human("after the trim")]
    await store.update_state(agent, config, {"messages": trimmed}, "model")
    with pytest.raises(ProviderRejected):
        await store.invoke(agent, {"messages": [HumanMessage("Hello?")]}, config)


def stock_deep_agent() -> CompiledStateGraph[Any]:
    """The deep agent as `--graph tests.support.delta_agents:stock_deep_agent` loads it."""
    return deep_agent(model(), ToolBox(), None)
