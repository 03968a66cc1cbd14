"""RepairToolCallsMiddleware on LangChain's create_agent with real savers, and the
package without LangChain installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from tests.support.agents import ToolBox, results_per_call, synthetic_results, thread
from tests.support.cancelling import cancel, tool_results
from tests.support.fakes import ProviderRejected, calls, model
from tests.support.in_run_agents import agent
from tests.support.oracle import assert_valid
from tests.support.stores import Store

ASK = {"messages": [HumanMessage("Weather in Paris?")]}
CHANGE = {"messages": [HumanMessage("Never mind, tell me a joke.")]}


@pytest.mark.parametrize("tool", ["get_weather", "ask_human"])
async def test_new_message_instead_of_resume_runs_first_time(store: Store, tool: str) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls((tool, "c1"), city="Paris"), "A joke.")
    graph = agent(replies, box, store, RepairToolCallsMiddleware())
    await store.invoke(graph, ASK, config)

    out = await store.invoke(graph, CHANGE, config)
    assert out["messages"][-1].content == "A joke."
    assert_valid(replies.received[-1])
    assert [m.tool_call_id for m in synthetic_results(replies.received[-1])] == ["c1"]
    assert box.runs == {}
    stored = await store.get_tuple(store.saver, config)
    assert stored is not None
    assert_valid(stored.checkpoint["channel_values"]["messages"])


async def test_without_the_middleware_the_provider_rejects_the_thread(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
    graph = agent(replies, box, store)
    await store.invoke(graph, ASK, config)
    with pytest.raises(ProviderRejected):
        await store.invoke(graph, CHANGE, config)


async def test_a_clean_thread_runs_as_without_the_middleware(store: Store) -> None:
    box, config = ToolBox(), thread()
    replies = model(calls(("get_weather", "c1"), ("get_weather", "c2"), city="Oslo"), "Sunny.")
    graph = agent(replies, box, store, RepairToolCallsMiddleware())
    await store.invoke(graph, ASK, config)
    first_ids = [m.id for m in (await store.get_state(graph, config)).values["messages"]]

    out = await store.invoke(graph, None, config)
    assert out["messages"][-1].content == "Sunny."
    assert box.runs == {"get_weather": 2}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert synthetic_results(out["messages"]) == []
    assert [m.id for m in out["messages"][:2]] == first_ids


async def test_cancel_and_reject_on_create_agent(store: Store) -> None:
    """create_agent sends one task per call, so a reviewer can reject one and approve another."""
    box, config = ToolBox(), thread()
    turn = calls(("get_weather", "c1"), ("ask_human", "c2"), city="Oslo")
    replies = model(turn, "Done.")
    graph = agent(replies, box, store)
    await store.invoke(graph, ASK, config)

    done = await cancel(store, graph, config, tool_call_ids=["c1"], reason="rejected")
    assert done.kept == ("c2",)
    await store.invoke(graph, None, config)
    out = await store.invoke(graph, Command(resume="yes"), config)
    assert box.runs == {"ask_human": 1}
    assert results_per_call(out["messages"]) == {"c1": 1, "c2": 1}
    assert tool_results(out["messages"])["c2"] == "human said yes"
    assert_valid(replies.received[-1])


def test_the_package_works_without_langchain() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["langchain"] = None  # as if it were not installed
        from langchain_core.messages import AIMessage, HumanMessage
        import langgraph_checkpoint_repair as repair

        hook = repair.pre_model_hook()
        broken = [HumanMessage("hi"), AIMessage("", tool_calls=[
            {"name": "t", "args": {}, "id": "c1"}]), HumanMessage("new")]
        update = hook({"messages": broken})
        print([m.type for m in update["llm_input_messages"]])
        try:
            import langgraph_checkpoint_repair.agents
        except ImportError as error:
            print("agents:", error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert "['human', 'ai', 'tool', 'human']" in done.stdout
    assert "pip install 'langgraph-checkpoint-repair[agents]'" in done.stdout
