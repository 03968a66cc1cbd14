"""PatchingCheckpointer with real agents on every real saver: bricked threads run
again, interrupted threads resume exactly as before."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, StateSnapshot

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support.agents import (
    ToolBox,
    custom_agent,
    react_agent,
    results_per_call,
    synthetic_results,
    thread,
)
from tests.support.fakes import ProviderRejected, calls, model
from tests.support.oracle import assert_valid
from tests.support.stores import Store

ASK = {"messages": [HumanMessage("Weather in Paris?")]}
CHANGE = {"messages": [HumanMessage("Never mind, tell me a joke.")]}


async def brick(store: Store, box: ToolBox, config: Any) -> None:
    """Interrupt before the tools, then send new input instead of resuming."""
    first = model(calls(("get_weather", "c1"), city="Paris"))
    graph = react_agent(first, box, store.saver, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    for _ in range(2):
        with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY"):
            await store.invoke(graph, CHANGE, config)


async def test_bricked_thread_runs_again_through_the_wrapper(store: Store) -> None:
    box, config = ToolBox(), thread()
    await brick(store, box, config)

    joker = model("Here is a joke.")
    wrapped = PatchingCheckpointer(store.saver)
    graph = react_agent(joker, box, wrapped, interrupt_before=["tools"])
    out = await store.invoke(graph, {"messages": [HumanMessage("Still there?")]}, config)

    assert out["messages"][-1].content == "Here is a joke."
    assert_valid(joker.received[-1])
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1"]
    assert box.runs == {}
    stored = await store.get_tuple(store.saver, config)
    assert stored is not None
    assert_valid(stored.checkpoint["channel_values"]["messages"])


async def test_provider_400_thread_runs_again_through_the_wrapper(store: Store) -> None:
    box, config = ToolBox(), thread()
    first = model(calls(("get_weather", "c1"), city="Paris"))
    graph = custom_agent(first, box, store.saver)
    await store.invoke(graph, ASK, config)
    for _ in range(2):
        with pytest.raises(ProviderRejected):
            await store.invoke(graph, CHANGE, config)

    second = model("Sure.")
    fixed = custom_agent(second, box, PatchingCheckpointer(store.saver))
    out = await store.invoke(fixed, {"messages": [HumanMessage("Hello?")]}, config)
    assert out["messages"][-1].content == "Sure."
    assert_valid(second.received[-1])


async def test_thread_interrupted_under_the_wrapper_fails_once_then_works(store: Store) -> None:
    box, config = ToolBox(), thread()
    wrapped = PatchingCheckpointer(store.saver)
    replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
    graph = react_agent(replies, box, wrapped, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY"):
        await store.invoke(graph, CHANGE, config)
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    assert_valid(out["messages"])


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_resume_after_interrupt_before_tools_runs_each_tool_once(
    store: Store, version: Any
) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo"), "Done.")
    graph = react_agent(
        replies, box, PatchingCheckpointer(store.saver), version=version, interrupt_before=["tools"]
    )
    await store.invoke(graph, ASK, config)
    state = await store.get_state(graph, config)
    assert set(state.next) == {"tools"}
    assert synthetic_results(state.values["messages"]) == []

    out = await store.invoke(graph, None, config)
    assert box.runs == {"get_weather": 2}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert synthetic_results(out["messages"]) == []
    assert_valid(out["messages"])


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_resume_after_interrupt_inside_a_tool(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("ask_human", "c1"), city="Rome"), "Approved.")
    graph = react_agent(replies, box, PatchingCheckpointer(store.saver), version=version)
    await store.invoke(graph, ASK, config)
    state = await store.get_state(graph, config)
    assert state.interrupts
    assert synthetic_results(state.values["messages"]) == []

    out = await store.invoke(graph, Command(resume="yes"), config)
    assert box.runs == {"ask_human": 1}
    tool_results = [m for m in out["messages"] if m.type == "tool"]
    assert [m.content for m in tool_results] == ["human said yes"]
    assert synthetic_results(out["messages"]) == []


async def test_resume_with_several_pending_interrupts(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("ask_human", "c1"), ("ask_human", "c2"), city="Rome"), "Both done.")
    graph = react_agent(replies, box, PatchingCheckpointer(store.saver), version="v2")
    await store.invoke(graph, ASK, config)
    state = await store.get_state(graph, config)
    assert len(state.interrupts) == 2

    answers = {i.id: f"ok-{n}" for n, i in enumerate(state.interrupts)}
    out = await store.invoke(graph, Command(resume=answers), config)
    assert box.runs == {"ask_human": 2}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert synthetic_results(out["messages"]) == []


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_resume_after_a_tool_raised(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("flaky", "c1"), city="Lima"), "Recovered.")
    graph = react_agent(
        replies, box, PatchingCheckpointer(store.saver), version=version, raise_tool_errors=True
    )
    with pytest.raises(RuntimeError, match="tool crashed"):
        await store.invoke(graph, ASK, config)
    state = await store.get_state(graph, config)
    assert synthetic_results(state.values["messages"]) == []

    out = await store.invoke(graph, None, config)
    assert box.runs == {"flaky": 1}
    assert results_per_call(out["messages"]) == {"c1": 1}
    assert synthetic_results(out["messages"]) == []
    assert out["messages"][-1].content == "Recovered."


def parent_with_agent_subgraph(agent: Any, saver: Any) -> Any:
    """A parent graph whose only node is a whole agent, sharing the messages key."""
    builder = StateGraph(MessagesState)
    builder.add_node("assistant", agent)
    builder.add_edge(START, "assistant")
    builder.add_edge("assistant", END)
    return builder.compile(checkpointer=saver)


async def test_subgraph_interrupted_before_its_tools_resumes_through_the_wrapper(
    store: Store,
) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Done.")
    agent = react_agent(replies, box, None, interrupt_before=["tools"])
    wrapper = PatchingCheckpointer(store.saver)
    graph = parent_with_agent_subgraph(agent, wrapper)
    await store.invoke(graph, ASK, config)

    state = await store.get_state(graph, config, subgraphs=True)
    inner = state.tasks[0].state
    assert isinstance(inner, StateSnapshot)
    assert inner.config["configurable"]["checkpoint_ns"].startswith("assistant:")
    assert set(inner.next) == {"tools"}
    assert synthetic_results(inner.values["messages"]) == []

    out = await store.invoke(graph, None, config)
    assert box.runs == {"get_weather": 1}
    assert results_per_call(out["messages"]) == {"c1": 1}
    assert synthetic_results(out["messages"]) == []
