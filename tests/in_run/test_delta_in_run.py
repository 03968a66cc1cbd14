"""The in-run helpers on delta message channels, on every real saver: cancel before new
input, `pre_model_hook(persist=True)` and the middleware, deep agents included."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

import warnings
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.managed import RemainingSteps
from typing_extensions import TypedDict

from langgraph_checkpoint_repair import pre_model_hook
from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from tests.support.agents import ToolBox, synthetic_results, thread
from tests.support.cancelling import cancel
from tests.support.delta_agents import (
    REDUCERS,
    brick_deep_agent_by_a_trim,
    deep_agent,
    delta_agent,
    delta_chat,
    messages_of,
)
from tests.support.fakes import calls, model
from tests.support.oracle import assert_valid
from tests.support.stores import Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent

ASK = {"messages": [HumanMessage("Weather in Paris?")]}
CHANGE = {"messages": [HumanMessage("Never mind, tell me a joke.")]}


async def stored_history(store: Store, config: Any, reducer: str = "deepagents") -> list[Any]:
    """The history LangGraph rebuilds from the store with the plain saver."""
    return await messages_of(store, delta_chat(store.saver, reducer), config)


@pytest.mark.parametrize("reducer", list(REDUCERS))
async def test_cancel_before_new_input_on_a_delta_agent(store: Store, reducer: str) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
    graph = delta_agent(replies, box, store.saver, reducer=reducer, interrupt_before=["tools"])
    await store.invoke(graph, ASK, config)
    done = await cancel(store, graph, config, reason="the user changed the subject")
    assert done.cancelled
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    assert box.runs["get_weather"] == 0
    assert_valid(await stored_history(store, config, reducer))


async def test_cancel_before_new_input_on_a_deep_agent_awaiting_approval(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
    graph = deep_agent(replies, box, store.saver, interrupt_on={"get_weather": True})
    await store.invoke(graph, ASK, config)
    assert (await store.get_state(graph, config)).interrupts
    done = await cancel(store, graph, config, reason="the user changed the subject")
    assert [a.tool_call_id for a in done.actions] == ["c1"]
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    assert box.runs["get_weather"] == 0
    assert [m.tool_call_id for m in synthetic_results(out["messages"])] == ["c1"]
    assert_valid(await stored_history(store, config))


def delta_react_state(reducer: str) -> Any:
    channel: DeltaChannel[Any] = DeltaChannel(REDUCERS[reducer], snapshot_frequency=3)
    fields = {
        "messages": Annotated[list[AnyMessage], channel],
        "remaining_steps": RemainingSteps,
        "llm_input_messages": list[AnyMessage],
    }
    return TypedDict("DeltaAgentState", fields)  # type: ignore[operator]


@pytest.mark.parametrize("reducer", list(REDUCERS))
async def test_pre_model_hook_persists_the_repair_on_a_delta_channel(
    store: Store, reducer: str
) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.", "Another.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        graph = create_react_agent(
            replies,
            box.all,
            checkpointer=store.saver,
            state_schema=delta_react_state(reducer),
            interrupt_before=["tools"],
            pre_model_hook=pre_model_hook(persist=True),
        )
    await store.invoke(graph, ASK, config)
    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    stored = await stored_history(store, config, reducer)
    assert_valid(stored)
    assert [m.content for m in stored if isinstance(m, HumanMessage)] == [
        "Weather in Paris?",
        "Never mind, tell me a joke.",
    ]
    again = await store.invoke(graph, {"messages": [HumanMessage("Again?")]}, config)
    assert again["messages"][-1].content == "Another."


async def test_middleware_repairs_and_persists_a_deep_agent_thread(store: Store) -> None:
    config = thread()
    replies = model("Hello.", "Still here.")
    await brick_deep_agent_by_a_trim(store, config, replies)
    graph = deep_agent(replies, ToolBox(), store.saver, middleware=[RepairToolCallsMiddleware()])
    out = await store.invoke(graph, {"messages": [HumanMessage("Hello?")]}, config)
    assert out["messages"][-1].content == "Still here."
    stored = await stored_history(store, config)
    assert_valid(stored)
    assert [m.content for m in stored][-2:] == ["Hello?", "Still here."]
