"""A real thread bricked for Claude by an unsigned thinking block (a stream cut
mid-thought, persisted): every run fails with the API's error until the wrapper
with `provider="anthropic"`, or the batch job, repairs it. Real LangGraph graph,
real savers; only the chat model is a fake."""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import create_react_agent

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy, pre_model_hook
from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.cli import main
from langgraph_checkpoint_repair.engine.policy import policy_from_settings
from langgraph_checkpoint_repair.server import settings_from
from tests.support.agents import thread
from tests.support.batch_runs import head_messages, run_repair
from tests.support.claude_model import (
    INVALID_SIGNATURE,
    AnthropicBadRequest,
    ClaudeLikeModel,
    claude,
    reply,
)
from tests.support.stores import Store

ANTHROPIC = RepairPolicy(provider="anthropic")
SIGNED = "claude:EqQBCkYIAxgCKkA"


def chat_graph(model: ClaudeLikeModel, saver: Any) -> CompiledStateGraph[Any]:
    """One model node: the whole history goes to the model on every turn."""

    def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as sqlite:
        yield sqlite


def brick(saver: SqliteSaver) -> Any:
    """Two turns: a signed reply, then one whose stream was cut mid-thought and stored."""
    config = thread()
    model = claude(
        reply("Sunny in Paris.", signature=SIGNED), reply("Rain in Oslo.", signature=None)
    )
    graph = chat_graph(model, saver)
    graph.invoke({"messages": [HumanMessage("Weather in Paris?", id="h1")]}, config)
    graph.invoke({"messages": [HumanMessage("And Oslo?", id="h2")]}, config)
    return config


def ask(saver: Any, config: Any, model: ClaudeLikeModel) -> dict[str, Any]:
    return chat_graph(model, saver).invoke({"messages": [HumanMessage("Thanks!", id="h3")]}, config)


def test_the_stored_thread_fails_on_every_run(saver: SqliteSaver) -> None:
    config = brick(saver)
    for _ in range(2):
        with pytest.raises(AnthropicBadRequest, match=f"messages.3.content.0: {INVALID_SIGNATURE}"):
            ask(saver, config, claude(AIMessage("You're welcome.")))
    plain_wrapper = PatchingCheckpointer(saver)  # pairing alone does not see it
    with pytest.raises(AnthropicBadRequest, match=INVALID_SIGNATURE):
        ask(plain_wrapper, config, claude(AIMessage("You're welcome.")))


def test_the_wrapper_with_provider_anthropic_runs_it_again(saver: SqliteSaver) -> None:
    config = brick(saver)
    stored = saver.get_tuple(config)
    assert stored is not None
    before = stored.checkpoint["channel_values"]["messages"]
    model = claude(AIMessage("You're welcome."))
    out = ask(PatchingCheckpointer(saver, policy=ANTHROPIC), config, model)
    assert out["messages"][-1].content == "You're welcome."
    seen = model.received[-1]
    assert seen[1].content == before[1].content  # the signed turn, byte for byte
    assert seen[3].content == [{"type": "text", "text": "Rain in Oslo."}]
    assert [m.id for m in seen] == [m.id for m in before] + ["h3"]
    # The next write stored the repaired history: the raw saver runs the thread too.
    ask(saver, config, claude(AIMessage("Bye.")))


def test_the_batch_job_repairs_the_stored_thread(saver: SqliteSaver) -> None:
    config = brick(saver)
    report = repair_threads(saver, policy=ANTHROPIC, min_idle=timedelta(0))
    assert report.threads_repaired == 1
    assert report.actions == {"thinking_dropped": 1}
    again = repair_threads(saver, policy=ANTHROPIC, min_idle=timedelta(0))
    assert again.threads_needing_repair == 0
    out = ask(saver, config, claude(AIMessage("You're welcome.")))
    assert out["messages"][-1].content == "You're welcome."


def test_the_command_line_setting_reaches_the_batch_job(saver: SqliteSaver) -> None:
    brick(saver)
    policy = policy_from_settings(["provider=anthropic"])
    dry = repair_threads(saver, policy=policy, min_idle=timedelta(0), dry_run=True)
    assert dry.actions == {"thinking_dropped": 1}
    assert repair_threads(saver, min_idle=timedelta(0), dry_run=True).threads_needing_repair == 0


async def test_every_saver_and_its_first_look_see_hygiene_defects(store: Store) -> None:
    """The PostgreSQL fast path's first look knows pairing only: with a provider set,
    it must not skip heads it proved paired."""
    config = thread()
    history = [
        HumanMessage("Weather?", id="h1"),
        reply("Sunny.", signature=None),
        HumanMessage("Thanks", id="h2"),
    ]
    graph = chat_graph(claude(), store.saver)
    await store.update_state(graph, config, {"messages": history}, "chat")
    report = await run_repair(store, policy=ANTHROPIC)
    assert report.actions == {"thinking_dropped": 1}
    repaired = await head_messages(store, config["configurable"]["thread_id"])
    assert repaired[1].content == [{"type": "text", "text": "Sunny."}]


def bricked_history() -> list[BaseMessage]:
    return [
        HumanMessage("Weather in Oslo?", id="h1"),
        reply("Rain in Oslo.", signature=None),
    ]


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


def test_the_agent_server_setting_and_the_command_line_reach_the_policy(
    saver: SqliteSaver, tmp_path: Path
) -> None:
    settings = settings_from({"LANGGRAPH_REPAIR_POLICY": "provider=anthropic"})
    assert settings["policy"] == ANTHROPIC
    with pytest.raises(ValueError, match="provider"):
        settings_from({"LANGGRAPH_REPAIR_POLICY": "provider=claude"})
    brick(saver)
    target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    out = io.StringIO()
    code = main(
        ["scan", target, "--policy", "provider=anthropic", "--min-idle", "0", "--json"], out=out
    )
    assert code == 0
    assert json.loads(out.getvalue().strip().splitlines()[-1])["actions"] == {"thinking_dropped": 1}
    assert main(["scan", target, "--policy", "provider=claude"], out=io.StringIO()) == 2


async def test_every_saver_loads_the_thread_repaired_through_the_wrapper(store: Store) -> None:
    config = thread()
    graph = chat_graph(claude(), store.saver)
    await store.update_state(graph, config, {"messages": bricked_history()}, "chat")
    wrapper = PatchingCheckpointer(store.saver, policy=ANTHROPIC)
    tup = await store.get_tuple(wrapper, config)
    raw = await store.get_tuple(store.saver, config)
    assert tup is not None and raw is not None
    assert tup.checkpoint["channel_values"]["messages"][1].content == [
        {"type": "text", "text": "Rain in Oslo."}
    ]
    assert raw.checkpoint["channel_values"]["messages"][1].content[0]["type"] == "thinking"


def test_show_names_the_provider_fixes(saver: SqliteSaver, tmp_path: Path) -> None:
    config = brick(saver)
    target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    thread_id = config["configurable"]["thread_id"]
    out = io.StringIO()
    argv = ["show", target, "--thread", thread_id, "--policy", "provider=anthropic"]
    assert main([*argv, "--json"], out=out) == 0
    shown = json.loads(out.getvalue().strip().splitlines()[-1])
    assert shown["actions"] == [
        {
            "kind": "thinking_dropped",
            "tool_call_id": None,
            "tool_name": None,
            "index": 3,
            "detail": "thinking block without a signature",
        }
    ]
    text = io.StringIO()
    assert main(argv, out=text) == 0
    assert "thinking_dropped: message 3: thinking block without a signature" in text.getvalue()
