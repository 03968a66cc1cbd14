"""A history bricked for Claude by an unsigned thinking block, in a running agent:
`pre_model_hook` hands Claude a valid history and the middleware stores one, with
`provider="anthropic"`. Real agents, a real saver; only the chat model is a fake."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import create_react_agent

from langgraph_checkpoint_repair import pre_model_hook
from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from tests.support import claude_threads
from tests.support.agents import thread
from tests.support.claude_model import INVALID_SIGNATURE, AnthropicBadRequest, claude
from tests.support.claude_threads import ANTHROPIC, bricked_history

saver = claude_threads.saver  # the fixture: a SqliteSaver on a fresh file


def react_agent_on_bricked_thread(saver: SqliteSaver, hook: Any) -> tuple[Any, Any]:
    model = claude(AIMessage("You're welcome."))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(model, [], checkpointer=saver, pre_model_hook=hook)
    config = thread()
    agent.update_state(config, {"messages": bricked_history()}, as_node="agent")
    return agent, config


def test_pre_model_hook_with_the_provider_hands_claude_a_valid_history(saver: SqliteSaver) -> None:
    thanks = {"messages": [HumanMessage("Thanks!")]}
    agent, config = react_agent_on_bricked_thread(saver, None)
    with pytest.raises(AnthropicBadRequest, match=INVALID_SIGNATURE):
        agent.invoke(thanks, config)
    agent, config = react_agent_on_bricked_thread(saver, pre_model_hook(policy=ANTHROPIC))
    assert agent.invoke(thanks, config)["messages"][-1].content == "You're welcome."


def test_the_middleware_with_the_provider_stores_a_valid_history(saver: SqliteSaver) -> None:
    model = claude(AIMessage("You're welcome."))
    config = thread()
    middleware = RepairToolCallsMiddleware(policy=ANTHROPIC)
    agent: CompiledStateGraph[Any] = create_agent(
        model, [], middleware=[middleware], checkpointer=saver
    )
    agent.update_state(config, {"messages": bricked_history()})
    out = agent.invoke({"messages": [HumanMessage("Thanks!")]}, config)
    assert out["messages"][1].content == [{"type": "text", "text": "Rain in Oslo."}]
    raw = saver.get_tuple(config)
    assert raw is not None
    assert raw.checkpoint["channel_values"]["messages"][1].content == out["messages"][1].content
