"""The token budget in a running agent: the middleware (the model's profile, its own
counter) and `pre_model_hook` trim what the model is sent, not the agent's state,
so a long single task goes on where it would fail."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import create_react_agent

from langgraph_checkpoint_repair import RepairPolicy, cancel_pending_tool_calls, pre_model_hook
from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from tests.support.agents import thread
from tests.support.context import TOO_LONG, WINDOW, markers, read_file, reading_turns, tokens
from tests.support.fakes import ProviderRejected, WindowModel
from tests.support.needs import needs_model_profiles

TASK = {"messages": [HumanMessage("Read the whole repository.")]}
STEPS = 12


class CountingModel(WindowModel):
    """A model with its own counter: twice LangChain's approximation."""

    def get_num_tokens_from_messages(self, messages: Sequence[BaseMessage], *_: Any) -> int:
        return 2 * tokens(messages)


def long_run() -> Any:
    """A thread's config with room for the task's steps (two supersteps a read)."""
    return {**thread(), "recursion_limit": 4 * STEPS}


def long_task_model(cls: type[WindowModel] = WindowModel, **settings: Any) -> WindowModel:
    return cls(messages=iter([*reading_turns(STEPS), "Done."]), window=WINDOW, **settings)


def agent_with(model: WindowModel, *middleware: Any) -> CompiledStateGraph[Any]:
    graph: CompiledStateGraph[Any] = create_agent(
        model, [read_file], middleware=list(middleware), checkpointer=InMemorySaver()
    )
    return graph


def assert_request_trimmed_state_whole(model: WindowModel, state: list[BaseMessage]) -> None:
    assert all(tokens(sent) <= WINDOW * 9 // 10 for sent in model.received)
    assert markers(model.received[-1])  # the last requests were trimmed
    assert not markers(state) and len(state) == 2 + 2 * STEPS  # the state holds everything
    assert state[-1].content == "Done."


def test_without_a_budget_the_long_task_fails() -> None:
    with pytest.raises(ProviderRejected, match=TOO_LONG):
        agent_with(long_task_model(), RepairToolCallsMiddleware()).invoke(TASK, long_run())


def test_the_middlewares_policy_trims_the_request() -> None:
    model = long_task_model()
    middleware = RepairToolCallsMiddleware(RepairPolicy(max_input_tokens=WINDOW))
    out = agent_with(model, middleware).invoke(TASK, long_run())
    assert_request_trimmed_state_whole(model, out["messages"])


@needs_model_profiles
def test_the_middleware_reads_the_window_from_the_models_profile() -> None:
    model = long_task_model(profile={"max_input_tokens": WINDOW})
    out = agent_with(model, RepairToolCallsMiddleware()).invoke(TASK, long_run())
    assert_request_trimmed_state_whole(model, out["messages"])
    unread = long_task_model(profile={"max_input_tokens": WINDOW})
    with pytest.raises(ProviderRejected, match=TOO_LONG):
        agent_with(unread, RepairToolCallsMiddleware(use_model_profile=False)).invoke(
            TASK, long_run()
        )


def test_the_middleware_can_count_with_the_models_own_counter() -> None:
    model = long_task_model(CountingModel)
    policy = RepairPolicy(max_input_tokens=WINDOW)
    middleware = RepairToolCallsMiddleware(policy, use_model_counter=True)
    out = agent_with(model, middleware).invoke(TASK, long_run())
    assert out["messages"][-1].content == "Done."
    assert all(
        model.get_num_tokens_from_messages(sent) <= WINDOW * 9 // 10 for sent in model.received
    )


def react_agent_with(model: WindowModel, persist: bool) -> CompiledStateGraph[Any]:
    hook = pre_model_hook(RepairPolicy(max_input_tokens=WINDOW), persist=persist)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        graph: CompiledStateGraph[Any] = create_react_agent(
            model, [read_file], pre_model_hook=hook, checkpointer=InMemorySaver()
        )
    return graph


def test_pre_model_hook_trims_the_request_and_leaves_the_state() -> None:
    model = long_task_model()
    out = react_agent_with(model, persist=False).invoke(TASK, long_run())
    assert_request_trimmed_state_whole(model, out["messages"])


def test_pre_model_hook_with_persist_trims_the_state_too() -> None:
    model = long_task_model()
    out = react_agent_with(model, persist=True).invoke(TASK, long_run())
    assert out["messages"][-1].content == "Done."
    assert len(markers(out["messages"])) == 1 and len(out["messages"]) < 2 + 2 * STEPS


def test_cancelling_pending_calls_writes_results_and_trims_nothing() -> None:
    model = WindowModel(messages=iter(reading_turns(STEPS)), window=100_000)
    graph: CompiledStateGraph[Any] = create_agent(
        model, [read_file], checkpointer=InMemorySaver(), interrupt_before=["tools"]
    )
    config = long_run()
    for _ in range(STEPS):  # every read approved but the last, left pending
        graph.invoke(TASK if _ == 0 else None, config)
    before = graph.get_state(config).values["messages"]
    policy = RepairPolicy(max_input_tokens=2, token_counter=len)  # room for two messages
    result = cancel_pending_tool_calls(graph, config, policy=policy)
    assert [a.kind for a in result.actions] == ["placeholder"]
    after = graph.get_state(config).values["messages"]
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert not markers(after)
