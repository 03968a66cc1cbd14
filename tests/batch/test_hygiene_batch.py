"""A real thread bricked for Claude by an unsigned thinking block: the batch job with
`provider="anthropic"` repairs it, on every real saver and past the PostgreSQL first
look. Real LangGraph graph, real savers; only the chat model is a fake."""

from __future__ import annotations

from datetime import timedelta

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.engine.policy import policy_from_settings
from tests.support import claude_threads
from tests.support.agents import thread
from tests.support.batch_runs import head_messages, run_repair
from tests.support.claude_model import claude, reply
from tests.support.claude_threads import ANTHROPIC, ask, brick, chat_graph
from tests.support.stores import Store

saver = claude_threads.saver  # the fixture: a SqliteSaver on a fresh file


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
