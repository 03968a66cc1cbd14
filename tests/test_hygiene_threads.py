"""A real thread bricked for Claude by an unsigned thinking block (a stream cut
mid-thought, persisted): every run fails with the API's error until the wrapper
with `provider="anthropic"`, or the batch job, repairs it. Real LangGraph graph,
real savers; only the chat model is a fake."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy
from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.engine.policy import policy_from_settings
from tests.agents import thread
from tests.batch_runs import head_messages, run_repair
from tests.claude_model import (
    INVALID_SIGNATURE,
    AnthropicBadRequest,
    ClaudeLikeModel,
    claude,
    reply,
)
from tests.stores import Store

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
