"""Delta message channels through the wrapper, on every real saver: bricked threads run
again, valid ones load exactly as LangGraph rebuilds them, interrupted ones resume."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

import operator
from collections.abc import Sequence
from typing import Annotated, Any

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.delta import COUNTERS_KEY, is_snapshot
from tests.support.agents import ToolBox, results_per_call, synthetic_results, thread
from tests.support.delta_agents import (
    REDUCERS,
    VALID_UPDATES,
    brick_deep_agent_by_a_trim,
    brick_delta_agent,
    deep_agent,
    delta_agent,
    delta_chat,
    messages_of,
)
from tests.support.fakes import ProviderRejected, calls, model
from tests.support.histories import ai, human, tool
from tests.support.oracle import assert_valid, violations
from tests.support.stores import Store


async def history_of(store: Store, graph: CompiledStateGraph[Any], config: Any) -> list[Any]:
    if store.is_async:
        return [s async for s in graph.aget_state_history(config)]
    return list(graph.get_state_history(config))


@pytest.mark.parametrize("reducer", list(REDUCERS))
async def test_a_bricked_delta_thread_runs_again_through_the_wrapper(
    store: Store, reducer: str
) -> None:
    config = thread()
    await brick_delta_agent(store, reducer, config)
    raw = delta_agent(model(), ToolBox(), store.saver, reducer=reducer)
    stored = await messages_of(store, raw, config)
    assert violations(stored)

    wrapper = PatchingCheckpointer(store.saver)
    agent = delta_agent(model("Here is a joke."), ToolBox(), wrapper, reducer=reducer)
    seen = await messages_of(store, agent, config)
    assert_valid(seen)
    assert [m.id for m in seen if not synthetic_results([m])] == [m.id for m in stored]
    result = await store.invoke(agent, {"messages": [HumanMessage("A joke, please.")]}, config)
    assert result["messages"][-1].content == "Here is a joke."
    assert_valid(result["messages"])
    assert [m.tool_call_id for m in synthetic_results(result["messages"])] == ["c2"]


async def test_a_delta_thread_whose_tool_raised_runs_again_through_the_wrapper(
    store: Store,
) -> None:
    config = thread()
    replies = model(calls(("flaky", "c1"), city="Oslo"), "Let us talk about something else.")
    agent = delta_agent(replies, ToolBox(), store.saver, raise_tool_errors=True)
    with pytest.raises(RuntimeError, match="tool crashed"):
        await store.invoke(agent, {"messages": [HumanMessage("Try the flaky tool")]}, config)
    with pytest.raises(ProviderRejected):
        await store.invoke(agent, {"messages": [HumanMessage("Never mind.")]}, config)

    wrapped = delta_agent(replies, ToolBox(), PatchingCheckpointer(store.saver))
    result = await store.invoke(wrapped, {"messages": [HumanMessage("Never mind.")]}, config)
    assert result["messages"][-1].content == "Let us talk about something else."
    assert [m.tool_call_id for m in synthetic_results(result["messages"])] == ["c1"]
    assert_valid(result["messages"])


async def test_named_delta_channels_are_rebuilt_too(store: Store) -> None:
    config = thread()
    await brick_delta_agent(store, "deepagents", config)
    agent = delta_agent(
        model(), ToolBox(), PatchingCheckpointer(store.saver, channels=["messages"])
    )
    assert_valid(await messages_of(store, agent, config))


@pytest.mark.parametrize("reducer", list(REDUCERS))
@pytest.mark.parametrize("name", list(VALID_UPDATES))
async def test_every_checkpoint_of_a_valid_thread_loads_as_langgraph_rebuilds_it(
    store: Store, reducer: str, name: str
) -> None:
    config = thread()
    raw = delta_chat(store.saver, reducer)
    for update in VALID_UPDATES[name]:
        await store.update_state(raw, config, {"messages": update}, "chat")
    wrapped = delta_chat(PatchingCheckpointer(store.saver), reducer)
    expected = await history_of(store, raw, config)
    seen = await history_of(store, wrapped, config)
    assert len(seen) == len(expected) == len(VALID_UPDATES[name])
    for mine, theirs in zip(seen, expected, strict=True):
        assert mine.values == theirs.values
        assert mine.config == theirs.config


async def test_remove_all_messages_is_honoured_with_either_reducer(store: Store) -> None:
    """deepagents writes `[RemoveMessage(REMOVE_ALL_MESSAGES), *patched]`; the rebuild clears
    everything before it even where LangGraph's experimental reducer would not."""
    config = thread()
    raw = delta_chat(store.saver, "deepagents")
    await store.update_state(raw, config, {"messages": [human("a"), ai("a1", "c1")]}, "chat")
    await store.update_state(raw, config, {"messages": [human("b")]}, "chat")
    reset = [RemoveMessage(id=REMOVE_ALL_MESSAGES), human("c"), ai("c1", "c9"), human("d")]
    await store.update_state(raw, config, {"messages": reset}, "chat")
    stored = await messages_of(store, raw, config)
    assert [m.id for m in stored] == ["h-c", "c1", "h-d"]
    for reducer in REDUCERS:
        seen = await messages_of(
            store, delta_chat(PatchingCheckpointer(store.saver), reducer), config
        )
        assert_valid(seen)
        assert [m.id for m in seen if not synthetic_results([m])] == ["h-c", "c1", "h-d"]


async def test_a_thread_holding_only_a_snapshot_is_repaired(store: Store) -> None:
    config = thread()
    raw = delta_chat(store.saver)
    broken = [human("a"), tool("zz"), ai("a1", "c1"), human("b")]
    await store.update_state(raw, config, {"messages": broken}, "chat")
    head = await store.get_tuple(store.saver, config)
    assert head is not None and is_snapshot(head.checkpoint["channel_values"]["messages"])
    wrapper = PatchingCheckpointer(store.saver)
    tup = await store.get_tuple(wrapper, config)
    assert tup is not None
    loaded = tup.checkpoint["channel_values"]["messages"]
    assert is_snapshot(loaded)
    assert_valid(loaded.value)
    assert_valid(await messages_of(store, delta_chat(wrapper), config))
    assert (await messages_of(store, raw, config)) == broken


@pytest.mark.parametrize("reducer", list(REDUCERS))
async def test_an_interrupted_delta_agent_resumes_exactly_as_without_the_wrapper(
    store: Store, reducer: str
) -> None:
    config = thread()
    box = ToolBox()
    replies = model(
        calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo"), "Sunny twice."
    )
    agent = delta_agent(
        replies, box, PatchingCheckpointer(store.saver), reducer=reducer, interrupt_before=["tools"]
    )
    await store.invoke(agent, {"messages": [HumanMessage("Weather?")]}, config)
    assert (await store.get_state(agent, config)).next == ("tools",)
    result = await store.invoke(agent, None, config)
    assert box.runs["get_weather"] == 2
    assert not synthetic_results(result["messages"])
    assert results_per_call(result["messages"]) == {"c1": 1, "c2": 1}
    assert_valid(result["messages"])


async def test_history_listing_through_the_wrapper_rebuilds_every_state(store: Store) -> None:
    """SqliteSaver and PostgresSaver hold a lock while `list` is paused: no deadlock."""
    config = thread()
    await brick_delta_agent(store, "deepagents", config)
    states = await history_of(
        store, delta_agent(model(), ToolBox(), PatchingCheckpointer(store.saver)), config
    )
    assert len(states) > 6
    for state in states:
        if state.next != ("tools",):  # about to run its calls: left alone
            assert_valid(state.values.get("messages", []))


def _add_numbers(state: Sequence[int] | None, writes: Sequence[Any]) -> list[int]:
    total = list(state or [])
    for write in writes:
        total.extend(write if isinstance(write, list) else [write])
    return total


class CountingState(TypedDict):
    messages: Annotated[
        list[BaseMessage], DeltaChannel(REDUCERS["deepagents"], snapshot_frequency=2)
    ]
    numbers: Annotated[list[int], DeltaChannel(_add_numbers, snapshot_frequency=2)]
    total: Annotated[int, operator.add]


async def test_a_delta_channel_that_holds_no_messages_is_left_to_langgraph(store: Store) -> None:
    builder = StateGraph(CountingState)
    builder.add_node("count", lambda s: {"numbers": [len(s["numbers"])], "total": 1})
    builder.add_edge(START, "count")
    builder.add_edge("count", END)
    raw = builder.compile(checkpointer=store.saver)
    wrapped = builder.compile(checkpointer=PatchingCheckpointer(store.saver))
    config = thread()
    for _ in range(5):
        await store.invoke(raw, {"numbers": [7], "messages": [HumanMessage("x")]}, config)
    expected = await store.get_state(raw, config)
    seen = await store.get_state(wrapped, config)
    assert seen.values == expected.values
    assert seen.values["numbers"][:3] == [7, 1, 7]


async def test_copying_a_checkpoint_through_the_wrapper_keeps_the_thread_loadable(
    store: Store,
) -> None:
    """`update_state(as_node="__copy__")` stores the loaded values as they are: the rebuilt
    list must not become a snapshot marker without its blob."""
    config = thread()
    await brick_delta_agent(store, "deepagents", config)
    raw = delta_agent(model(), ToolBox(), store.saver)
    before = await messages_of(store, raw, config)
    wrapped = delta_agent(model(), ToolBox(), PatchingCheckpointer(store.saver))
    await store.update_state(wrapped, config, None, "__copy__")
    after = await messages_of(store, raw, config)
    assert all(isinstance(m, BaseMessage) for m in after)
    assert [m.id for m in after if not synthetic_results([m])] == [m.id for m in before]
    assert_valid(await messages_of(store, wrapped, config))


async def test_deep_agent_bricked_by_a_reused_call_id_after_approval_runs_again(
    store: Store,
) -> None:
    """deepagents' own patching sees `call_0` answered in the first turn and lets the
    second, abandoned `call_0` through: the provider rejects every later run."""
    config = thread()
    box = ToolBox()
    replies = model(
        calls(("get_weather", "call_0"), city="Oslo"), "Sunny in Oslo.",
        calls(("get_weather", "call_0"), city="Rome"), "Here is a joke.",
    )  # fmt: skip
    agent = deep_agent(replies, box, store.saver, interrupt_on={"get_weather": True})
    approve: Command[Any] = Command(resume={"decisions": [{"type": "approve"}]})
    await store.invoke(agent, {"messages": [HumanMessage("Weather in Oslo?")]}, config)
    await store.invoke(agent, approve, config)
    await store.invoke(agent, {"messages": [HumanMessage("And Rome?")]}, config)
    with pytest.raises(ProviderRejected):
        await store.invoke(agent, {"messages": [HumanMessage("Never mind, a joke.")]}, config)
    with pytest.raises(ProviderRejected):
        await store.invoke(agent, {"messages": [HumanMessage("Hello?")]}, config)
    head = await store.get_tuple(store.saver, config)
    assert head is not None
    counters: Any = head.metadata.get(COUNTERS_KEY) or {}
    assert "messages" in counters

    wrapped = deep_agent(replies, box, PatchingCheckpointer(store.saver))
    result = await store.invoke(wrapped, {"messages": [HumanMessage("A joke?")]}, config)
    assert result["messages"][-1].content == "Here is a joke."
    assert_valid(result["messages"])
    assert box.runs["get_weather"] == 1


async def test_deep_agent_with_an_orphan_result_kept_by_a_trim_runs_again(store: Store) -> None:
    config = thread()
    replies = model("Hello.", "Still here.")
    await brick_deep_agent_by_a_trim(store, config, replies)
    wrapped = deep_agent(replies, ToolBox(), PatchingCheckpointer(store.saver))
    result = await store.invoke(wrapped, {"messages": [HumanMessage("Hello?")]}, config)
    assert result["messages"][-1].content == "Still here."
    assert_valid(result["messages"])


async def test_an_interrupted_deep_agent_resumes_through_the_wrapper(store: Store) -> None:
    config = thread()
    box = ToolBox()
    replies = model(calls(("get_weather", "c1"), city="Oslo"), "Sunny in Oslo.")
    agent = deep_agent(
        replies, box, PatchingCheckpointer(store.saver), interrupt_on={"get_weather": True}
    )
    await store.invoke(agent, {"messages": [HumanMessage("Weather?")]}, config)
    assert (await store.get_state(agent, config)).interrupts
    approve: Command[Any] = Command(resume={"decisions": [{"type": "approve"}]})
    result = await store.invoke(agent, approve, config)
    assert box.runs["get_weather"] == 1
    assert not synthetic_results(result["messages"])
    assert result["messages"][-1].content == "Sunny in Oslo."
    assert_valid(result["messages"])
