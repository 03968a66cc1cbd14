"""cancel_pending_tool_calls on real agents and real savers: the interrupted thread
moves on (new message) or resumes, and no cancelled tool ever runs."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command, StateSnapshot

from langgraph_checkpoint_repair import CannotCancel, PatchingCheckpointer, RepairPolicy
from tests.support.agents import (
    ToolBox,
    custom_agent,
    react_agent,
    result_saved,
    results_per_call,
    synthetic_results,
    thread,
)
from tests.support.cancelling import Crash, cancel, crashing_agent, parent_of, tool_results
from tests.support.fakes import calls, model
from tests.support.oracle import assert_valid, needs_anthropic_invalid_calls
from tests.support.stores import Store

ASK = {"messages": [HumanMessage("Weather in Paris and Oslo?")]}
CHANGE = {"messages": [HumanMessage("Never mind, tell me a joke.")]}
REASON = "the user changed the subject"


async def assert_stored_valid(store: Store, config: Any) -> list[Any]:
    stored = await store.get_tuple(store.saver, config)
    assert stored is not None
    messages: list[Any] = stored.checkpoint["channel_values"]["messages"]
    assert_valid(messages)
    return messages


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_interrupted_before_tools_then_new_message(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), ("get_weather", "c2"), city="Paris"), "A joke.")
    graph = react_agent(replies, box, store.saver, version=version, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)

    done = await cancel(store, graph, config, reason=REASON)
    assert done.cancelled
    assert done.tool_call_ids == ("c1", "c2")
    assert [a.kind for a in done.actions] == ["placeholder", "placeholder"]
    stored = await store.get_tuple(store.saver, config)
    assert stored is not None and stored.metadata["source"] == "update"

    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    assert_valid(replies.received[-1])
    assert box.runs == {}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    texts = [m.content for m in synthetic_results(out["messages"])]
    assert texts == [
        f"Tool call 'get_weather' (id {c}) was cancelled before it completed: {REASON}."
        for c in ("c1", "c2")
    ]
    await assert_stored_valid(store, config)


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_resume_after_cancel_goes_to_the_model_not_the_tools(
    store: Store, version: Any
) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Cancelled, as you asked.")
    graph = react_agent(replies, box, store.saver, version=version, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    await cancel(store, graph, config)
    assert (await store.get_state(graph, config)).next == ("agent",)

    out = await store.invoke(graph, None, config)
    assert out["messages"][-1].content == "Cancelled, as you asked."
    assert box.runs == {}
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1"]
    assert_valid(replies.received[-1])


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("then", ["resume", "new message"])
async def test_interrupt_inside_a_tool(store: Store, version: Any, then: str) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("ask_human", "c1"), city="Rome"), "Moving on.")
    graph = react_agent(replies, box, store.saver, version=version)
    await store.invoke(graph, ASK, config)
    assert (await store.get_state(graph, config)).interrupts

    done = await cancel(store, graph, config, reason=REASON)
    assert done.tool_call_ids == ("c1",)
    state = await store.get_state(graph, config)
    assert state.interrupts == ()

    value: Any = Command(resume="yes") if then == "resume" else CHANGE
    out = await store.invoke(graph, value, config)
    assert out["messages"][-1].content == "Moving on."
    assert box.runs == {}
    assert results_per_call(out["messages"]) == {"c1": 1}
    assert_valid(replies.received[-1])
    await assert_stored_valid(store, config)


async def test_several_pending_interrupts_and_a_finished_call(store: Store) -> None:
    box, config = ToolBox(), thread()
    turn = calls(("ask_human", "c1"), ("get_weather", "c2"), ("ask_human", "c3"), city="Rome")
    replies = model(turn, "Done.")
    graph = react_agent(replies, box, store.saver, version="v2")
    await store.invoke(graph, ASK, config)
    state = await store.get_state(graph, config)
    assert len(state.interrupts) == 2
    assert box.runs == {"get_weather": 1}

    done = await cancel(store, graph, config)
    assert done.tool_call_ids == ("c1", "c3")
    out = await store.invoke(graph, Command(resume="anything"), config)
    assert box.runs == {"get_weather": 1}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1, "c3": 1}
    assert tool_results(out["messages"])["c2"] == "sunny in Rome"
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1", "c3"]
    assert_valid(replies.received[-1])


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_a_tool_that_raised(store: Store, version: Any) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("flaky", "c1"), city="Lima"), "Let us skip that.")
    graph = react_agent(replies, box, store.saver, version=version, raise_tool_errors=True)
    with pytest.raises(RuntimeError, match="tool crashed"):
        await store.invoke(graph, ASK, config)

    done = await cancel(store, graph, config, reason=REASON)
    assert done.tool_call_ids == ("c1",)
    out = await store.invoke(graph, None, config)
    assert out["messages"][-1].content == "Let us skip that."
    assert box.runs == {}
    assert results_per_call(out["messages"]) == {"c1": 1}
    assert_valid(replies.received[-1])


async def test_a_tool_that_raised_keeps_the_sibling_that_finished(store: Store) -> None:
    config = thread()
    box = ToolBox(fail_after=result_saved(store.saver, config, "c2"))
    replies = model(calls(("flaky", "c1"), ("get_weather", "c2"), city="Lima"), "Partly done.")
    graph = react_agent(replies, box, store.saver, version="v2", raise_tool_errors=True)
    with pytest.raises(RuntimeError, match="tool crashed"):
        await store.invoke(graph, ASK, config)
    assert box.runs == {"get_weather": 1}

    done = await cancel(store, graph, config)
    assert done.tool_call_ids == ("c1",)
    messages = await assert_stored_valid(store, config)
    assert tool_results(messages)["c2"] == "sunny in Lima"

    out = await store.invoke(graph, CHANGE, config)
    assert box.runs == {"get_weather": 1}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert_valid(replies.received[-1])


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_a_worker_that_crashed_mid_tool(store: Store, version: Any) -> None:
    config = thread()
    replies = model(calls(("crash", "c1"), city="Kyiv"), "Sorry, that failed.")
    graph = crashing_agent(replies, store.saver, version)
    with pytest.raises(Crash):
        await store.invoke(graph, ASK, config)
    state = await store.get_state(graph, config)
    assert set(state.next) == {"tools"}
    assert all(t.error is None for t in state.tasks)

    done = await cancel(store, graph, config)
    assert done.tool_call_ids == ("c1",)
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "Sorry, that failed."
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1"]
    assert_valid(replies.received[-1])


@pytest.mark.parametrize("then", ["resume", "new message"])
async def test_custom_graph_with_another_tool_node_name(store: Store, then: str) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Fine.")
    graph = custom_agent(replies, box, store.saver)
    await store.invoke(graph, ASK, config)
    assert (await store.get_state(graph, config)).next == ("act",)

    await cancel(store, graph, config)
    assert (await store.get_state(graph, config)).next == ("think",)
    out = await store.invoke(graph, None if then == "resume" else CHANGE, config)
    assert out["messages"][-1].content == "Fine."
    assert box.runs == {}
    assert_valid(replies.received[-1])


async def test_pending_calls_of_a_subgraph(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Done without it.")
    agent = react_agent(replies, box, None, interrupt_before=["tools"])
    graph = parent_of(agent, store.saver)
    await store.invoke(graph, ASK, config)

    done = await cancel(store, graph, config, reason=REASON)
    assert done.tool_call_ids == ("c1",)
    assert done.config is not None
    assert done.config["configurable"]["checkpoint_ns"].startswith("assistant:")
    inner = (await store.get_state(graph, config, subgraphs=True)).tasks[0].state
    assert isinstance(inner, StateSnapshot)
    assert inner.next == ("agent",)

    out = await store.invoke(graph, None, config)
    assert out["messages"][-1].content == "Done without it."
    assert box.runs == {}
    assert results_per_call(out["messages"]) == {"c1": 1}
    assert_valid(replies.received[-1])


async def test_through_the_wrapper(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Joke.")
    wrapped = PatchingCheckpointer(store.saver)
    graph = react_agent(replies, box, wrapped, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    done = await cancel(store, graph, config)
    assert done.tool_call_ids == ("c1",)
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "Joke."
    assert_valid(replies.received[-1])


async def test_nothing_pending_writes_nothing(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Sunny.")
    graph = react_agent(replies, box, store.saver)
    await store.invoke(graph, ASK, config)
    before = await store.list(store.saver, config)

    done = await cancel(store, graph, config, reason=REASON)
    assert not done.cancelled
    assert done.actions == () and done.config is None
    assert len(await store.list(store.saver, config)) == len(before)
    assert box.runs == {"get_weather": 1}


async def test_second_cancel_finds_nothing(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"))
    graph = react_agent(replies, box, store.saver, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    assert (await cancel(store, graph, config)).cancelled
    count = len(await store.list(store.saver, config))
    assert not (await cancel(store, graph, config)).cancelled
    assert len(await store.list(store.saver, config)) == count


@pytest.mark.parametrize(
    ("policy", "reason", "text"),
    [
        (
            None,
            None,
            "Tool call 'get_weather' (id c1) was cancelled before it completed; "
            "no result is available.",
        ),
        (
            RepairPolicy(language="zh"),
            "用户换了话题",
            "工具调用 'get_weather'（id c1）在完成之前已被取消，原因是用户换了话题。",
        ),
        (
            RepairPolicy(placeholder="{name} stopped."),
            "Out of budget!",
            "get_weather stopped. Reason: Out of budget.",
        ),
    ],
)
async def test_synthetic_text(store: Store, policy: Any, reason: Any, text: str) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"))
    graph = react_agent(replies, box, store.saver, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    await cancel(store, graph, config, policy=policy, reason=reason)
    state = await store.get_state(graph, config)
    assert [m.content for m in synthetic_results(state.values["messages"])] == [text]


async def test_unknown_call_id_is_refused_and_nothing_is_written(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Oslo"))
    graph = react_agent(replies, box, store.saver, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    count = len(await store.list(store.saver, config))
    with pytest.raises(CannotCancel, match="c9"):
        await cancel(store, graph, config, tool_call_ids=["c9"])
    assert len(await store.list(store.saver, config)) == count


@needs_anthropic_invalid_calls
async def test_finished_thread_with_unparsable_call_arguments(store: Store) -> None:
    """Nothing is scheduled; the call that never ran keeps the engine's retry text."""
    box, config = ToolBox(), thread()
    unparsable = AIMessage(
        "",
        invalid_tool_calls=[
            {"name": "get_weather", "args": "{oops", "id": "c1", "error": "bad JSON"}
        ],
    )
    replies = model(unparsable, "Let me try again.")
    graph = custom_agent(replies, box, store.saver)
    await store.invoke(graph, ASK, config)
    assert (await store.get_state(graph, config)).next == ()

    done = await cancel(store, graph, config, reason=REASON)
    assert done.tool_call_ids == ("c1",)
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "Let me try again."
    [synthetic] = synthetic_results(out["messages"])
    assert "could not be parsed" in str(synthetic.content)
    assert_valid(replies.received[-1])
