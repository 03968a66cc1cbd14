"""The human-in-the-loop reject flow: a reviewer rejects one pending call and
approves the other; the rejected one is answered as such, the approved one runs
once, and every call has exactly one result."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from langgraph_checkpoint_repair import CannotCancel
from langgraph_checkpoint_repair.compatibility.features import has_task_statuses
from tests.support.agents import ToolBox, react_agent, results_per_call, synthetic_results, thread
from tests.support.cancelling import cancel, tool_results
from tests.support.fakes import calls, model
from tests.support.oracle import assert_valid
from tests.support.stores import Store

ASK = {"messages": [HumanMessage("Weather in Paris and Oslo?")]}
REJECTED = "the reviewer rejected it"
REJECTED_TEXT = f"Tool call 'get_weather' (id c1) was cancelled before it completed: {REJECTED}."


async def test_reject_one_approve_the_other_before_the_tools(store: Store) -> None:
    box, config = ToolBox(), thread()
    turn = calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo")
    replies = model(turn, "Only Oslo, then.")
    graph = react_agent(replies, box, store.saver, version="v2", interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)

    done = await cancel(store, graph, config, tool_call_ids=["c1"], reason=REJECTED)
    assert done.tool_call_ids == ("c1",)
    assert done.kept == ("c2",)
    assert box.runs == {}

    out = await store.invoke(graph, None, config)
    assert out["messages"][-1].content == "Only Oslo, then."
    assert box.runs == {"get_weather": 1}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert tool_results(out["messages"]) == {"c1": REJECTED_TEXT, "c2": "sunny in Oslo"}
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1"]
    assert_valid(replies.received[-1])
    stored = await store.get_tuple(store.saver, config)
    assert stored is not None
    assert results_per_call(stored.checkpoint["channel_values"]["messages"]) == {"c1": 1, "c2": 1}


@pytest.mark.skipif(not has_task_statuses(), reason="needs langgraph 1.2.13")
async def test_reject_one_of_two_interrupted_approvals(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("ask_human", "c1"), ("ask_human", "c2"), city="Rome"), "Done.")
    graph = react_agent(replies, box, store.saver, version="v2")
    await store.invoke(graph, ASK, config)
    assert len((await store.get_state(graph, config)).interrupts) == 2

    await cancel(store, graph, config, tool_call_ids=["c1"], reason=REJECTED)
    state = await store.get_state(graph, config)
    assert len(state.interrupts) == 1

    out = await store.invoke(graph, Command(resume="yes"), config)
    assert box.runs == {"ask_human": 1}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert tool_results(out["messages"])["c2"] == "human said yes"
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1"]
    assert_valid(replies.received[-1])


@pytest.mark.skipif(has_task_statuses(), reason="langgraph 1.2.13 and later take it")
async def test_an_older_langgraph_refuses_to_reject_one_of_two_interrupted_approvals(
    store: Store,
) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("ask_human", "c1"), ("ask_human", "c2"), city="Rome"), "Done.")
    graph = react_agent(replies, box, store.saver, version="v2")
    await store.invoke(graph, ASK, config)
    before = await store.get_tuple(store.saver, config)
    with pytest.raises(CannotCancel, match=r"\['c1'\] wait on an interrupt.*1\.2\.13"):
        await cancel(store, graph, config, tool_call_ids=["c1"], reason=REJECTED)
    after = await store.get_tuple(store.saver, config)
    assert before is not None and after is not None
    assert after.config == before.config and after.pending_writes == before.pending_writes

    await cancel(store, graph, config, reason=REJECTED)
    out = await store.invoke(graph, {"messages": [HumanMessage("Never mind.")]}, config)
    assert box.runs == {}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert_valid(replies.received[-1])


async def test_reject_then_move_on_anyway(store: Store) -> None:
    box, config = ToolBox(), thread()
    turn = calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo")
    replies = model(turn, "A joke instead.")
    graph = react_agent(replies, box, store.saver, version="v2", interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    await cancel(store, graph, config, tool_call_ids=["c1"], reason=REJECTED)

    done = await cancel(store, graph, config)
    assert done.tool_call_ids == ("c2",)
    out = await store.invoke(graph, {"messages": [HumanMessage("Tell me a joke.")]}, config)
    assert box.runs == {}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert tool_results(out["messages"])["c1"] == REJECTED_TEXT
    assert_valid(replies.received[-1])


async def test_rejecting_an_answered_call_does_nothing(store: Store) -> None:
    box, config = ToolBox(), thread()
    turn = calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo")
    graph = react_agent(model(turn), box, store.saver, version="v2", interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    await cancel(store, graph, config, tool_call_ids=["c1"])

    again = await cancel(store, graph, config, tool_call_ids=["c1"])
    assert not again.cancelled
    assert again.kept == ("c2",)


async def test_one_task_for_all_calls_refuses_a_partial_cancel(store: Store) -> None:
    """A v1 ToolNode runs every call of the message: rejecting one would still run it."""
    box, config = ToolBox(), thread()
    turn = calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo")
    replies = model(turn, "Both.")
    graph = react_agent(replies, box, store.saver, version="v1", interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    count = len(await store.list(store.saver, config))

    with pytest.raises(CannotCancel, match="version='v2'"):
        await cancel(store, graph, config, tool_call_ids=["c1"])
    assert len(await store.list(store.saver, config)) == count
    state = await store.get_state(graph, config)
    assert state.next == ("tools",)
    assert synthetic_results(state.values["messages"]) == []

    out = await store.invoke(graph, None, config)
    assert box.runs == {"get_weather": 2}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_naming_every_pending_call_is_a_full_cancel(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    turn = calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo")
    replies = model(turn, "Neither.")
    graph = react_agent(replies, box, store.saver, version=version, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)

    done = await cancel(store, graph, config, tool_call_ids=["c2", "c1"], reason=REJECTED)
    assert done.tool_call_ids == ("c1", "c2") and done.kept == ()
    out = await store.invoke(graph, None, config)
    assert box.runs == {}
    assert len(synthetic_results(out["messages"])) == 2
    assert_valid(replies.received[-1])
