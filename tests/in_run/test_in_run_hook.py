"""pre_model_hook on real prebuilt agents and savers: a thread that gets a new
message while interrupted runs on the first try, and the model sees a valid history."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from langgraph_checkpoint_repair import RepairPolicy
from tests.support.agents import ToolBox, results_per_call, synthetic_results, thread
from tests.support.fakes import calls, model
from tests.support.in_run_agents import hooked_agent
from tests.support.oracle import assert_valid
from tests.support.stores import Store

ASK = {"messages": [HumanMessage("Weather in Paris?")]}
CHANGE = {"messages": [HumanMessage("Never mind, tell me a joke.")]}


async def stored_values(store: Store, config: Any) -> dict[str, Any]:
    stored = await store.get_tuple(store.saver, config)
    assert stored is not None
    return dict(stored.checkpoint["channel_values"])


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("tool", ["get_weather", "ask_human"])
async def test_new_message_instead_of_resume_runs_first_time(
    store: Store, version: Any, tool: str
) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls((tool, "c1"), city="Paris"), "A joke.", "Another joke.")
    graph = hooked_agent(replies, box, store, version)
    await store.invoke(graph, ASK, config)

    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    seen = replies.received[-1]
    assert_valid(seen)
    assert [m.tool_call_id for m in synthetic_results(seen)] == ["c1"]
    assert box.runs == {}

    stored = await stored_values(store, config)
    assert synthetic_results(stored["messages"]) == []
    out = await store.invoke(graph, {"messages": [HumanMessage("One more.")]}, config)
    assert out["messages"][-1].content == "Another joke."
    assert_valid(replies.received[-1])


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_persist_stores_the_repaired_history(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
    graph = hooked_agent(replies, box, store, version, persist=True)
    await store.invoke(graph, ASK, config)

    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    assert_valid(replies.received[-1])
    stored = await stored_values(store, config)
    assert_valid(stored["messages"])
    assert [m.tool_call_id for m in synthetic_results(stored["messages"])] == ["c1"]
    assert [m.type for m in stored["messages"]] == ["human", "ai", "tool", "human", "ai"]
    assert stored.get("llm_input_messages", []) == []


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_a_clean_thread_runs_as_without_the_hook(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo"), "Sunny.")
    graph = hooked_agent(replies, box, store, version)
    await store.invoke(graph, ASK, config)

    out = await store.invoke(graph, None, config)
    assert out["messages"][-1].content == "Sunny."
    assert box.runs == {"get_weather": 2}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert synthetic_results(out["messages"]) == []
    assert replies.received[-1] == out["messages"][:-1]
    assert (await stored_values(store, config)).get("llm_input_messages", []) == []


async def test_resume_after_interrupt_inside_a_tool(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("ask_human", "c1"), city="Rome"), "Approved.")
    graph = hooked_agent(replies, box, store, "v2")
    await store.invoke(graph, ASK, config)
    await store.invoke(graph, None, config)

    out = await store.invoke(graph, Command(resume="yes"), config)
    assert out["messages"][-1].content == "Approved."
    assert box.runs == {"ask_human": 1}
    assert synthetic_results(out["messages"]) == []
    assert_valid(replies.received[-1])


async def test_policy_reaches_the_model(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Paris"), "好的。")
    graph = hooked_agent(replies, box, store, "v2", policy=RepairPolicy(language="zh"))
    await store.invoke(graph, ASK, config)
    await store.invoke(graph, CHANGE, config)
    [synthetic] = synthetic_results(replies.received[-1])
    assert str(synthetic.content).startswith("工具调用 'get_weather'")
