"""A `redis://` TARGET over the shallow savers' layout (ShallowRedisSaver and
AsyncShallowRedisSaver keep one document per thread and namespace, replaced at every
step), on a real Redis server: every broken thread found, repaired by replacing its
document atomically, the raw saver runs a prebuilt agent on, undo puts every key back
byte for byte with its TTL; an earlier step's writes beside the head are not taken for
the head's; an application writing meanwhile keeps its write."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")

import redis
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.redis import RedisSaver
from langgraph.checkpoint.redis.ashallow import AsyncShallowRedisSaver
from langgraph.checkpoint.redis.shallow import ShallowRedisSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.cli.exits import EXIT_OK, EXIT_USAGE
from langgraph_checkpoint_repair.stores.redis import shallow
from langgraph_checkpoint_repair.stores.redis.running import StepRunner
from langgraph_checkpoint_repair.stores.redis.shallow_saver import ShallowRedisStoreSaver
from langgraph_checkpoint_repair.stores.redis.steps import Commit
from tests.support.agents import ToolBox, react_agent
from tests.support.cli_runs import run_cli
from tests.support.fakes import model
from tests.support.redis_keys import command, dumps, ttls
from tests.support.seeding import config, seed
from tests.support.stores import Store

TTL = {"default_ttl": 60}


def saved(url: str) -> dict[bytes, bytes]:
    """The savers' keys: every key but the repair's archive."""
    return {k: v for k, v in dumps(url).items() if not k.startswith(b"langgraph_repair:")}


@pytest.mark.parametrize("is_async", [False, True], ids=["ShallowRedisSaver", "AsyncShallow"])
def test_a_shallow_store_is_repaired_goes_on_and_undo_puts_every_key_back(
    redis_url: str, is_async: bool
) -> None:
    broken = asyncio.run(seeded(redis_url, is_async))
    before, lives = dumps(redis_url), ttls(redis_url)

    code, scanned, err = command("scan", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    found = {t["thread_id"] for t in scanned["threads"] if t["outcome"] == "would_repair"}
    assert found == set(broken)
    assert dumps(redis_url) == before  # a dry run changes no key
    code, repaired, err = command("repair", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert repaired["threads_repaired"] == len(broken)
    left = ttls(redis_url)
    assert all(0 < left[key] <= lives.get(key, left[key]) for key in saved(redis_url))
    assert command("repair", redis_url, "--min-idle", "0", "--json")[1]["threads_repaired"] == 0

    code, undone, err = command("undo", redis_url, "--run", repaired["run_id"], "--json")
    assert code == EXIT_OK, err
    assert undone["threads_restored"] == len(broken)
    assert saved(redis_url) == before
    restored = ttls(redis_url)
    assert all(0 < restored[key] <= lives[key] for key in before)

    command("repair", redis_url, "--min-idle", "0")
    messages = asyncio.run(goes_on(redis_url, is_async, "bricked-0"))
    assert [m.content for m in messages][-2:] == ["Back again.", "Fine now."]


async def seeded(url: str, is_async: bool) -> list[str]:
    if is_async:
        async with AsyncShallowRedisSaver.from_conn_string(url, ttl=TTL) as saver:
            return (await seed(Store(saver, is_async=True))).broken
    with ShallowRedisSaver.from_conn_string(url, ttl=TTL) as sync_saver:
        sync_saver.setup()
        return (await seed(Store(sync_saver, is_async=False))).broken


async def goes_on(url: str, is_async: bool, thread_id: str) -> list[Any]:
    """The raw saver runs a prebuilt agent on the thread; its messages after."""
    turn = {"messages": [HumanMessage("Back again.")]}
    if is_async:
        async with AsyncShallowRedisSaver.from_conn_string(url) as saver:
            agent = react_agent(model("Fine now."), ToolBox(), saver)
            return list((await agent.ainvoke(turn, config(thread_id)))["messages"])
    with ShallowRedisSaver.from_conn_string(url) as sync_saver:
        sync_saver.setup()
        agent = react_agent(model("Fine now."), ToolBox(), sync_saver)
        return list(agent.invoke(turn, config(thread_id))["messages"])


def failing_once() -> Any:
    """A node that fails on its first run (LangGraph stores an `__error__` write for
    it), then answers."""
    failures = [RuntimeError("the provider timed out")]

    def answer(state: MessagesState) -> dict[str, Any]:
        if failures:
            raise failures.pop()
        return {"messages": [AIMessage("answered")]}

    graph = StateGraph(MessagesState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph


def test_an_earlier_steps_writes_are_not_taken_for_the_heads(redis_url: str) -> None:
    with ShallowRedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        app = failing_once().compile(checkpointer=saver)
        with pytest.raises(RuntimeError):
            app.invoke({"messages": [HumanMessage("hi")]}, config("retried"))
        app.invoke({"messages": [HumanMessage("again")]}, config("retried"))
        stock = saver.get_tuple(config("retried"))
    assert stock is not None and "__error__" in [w[1] for w in stock.pending_writes or []]

    with ShallowRedisStoreSaver.from_conn_string(redis_url) as ours:
        ours.setup()
        head = ours.get_tuple(config("retried"))
    assert head is not None and head.pending_writes == []
    code, scanned, err = command("scan", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert scanned["threads_needing_repair"] == 0 and not scanned["skipped"]


class WritingRunner(StepRunner):
    """Runs a repair's steps; the application writes a turn to the thread after the
    repair read the head, before the transaction that replaces it."""

    app_turn: Any = None

    def run(self, txn: Any, step: Any) -> Any:
        if isinstance(step, Commit) and WritingRunner.app_turn is not None:
            WritingRunner.app_turn()
            WritingRunner.app_turn = None
        return super().run(txn, step)


def test_an_application_writing_during_a_repair_keeps_its_write(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = asyncio.run(seeded(redis_url, is_async=False))
    with ShallowRedisSaver.from_conn_string(redis_url) as app_saver:
        app_saver.setup()
        agent = react_agent(model("Hello again."), ToolBox(), app_saver)
        WritingRunner.app_turn = lambda: agent.update_state(
            config("orphan"), {"messages": [HumanMessage("written by the app")]}
        )
        monkeypatch.setattr(shallow, "StepRunner", WritingRunner)
        with ShallowRedisStoreSaver.from_conn_string(redis_url) as ours:
            ours.setup()
            report = repair_threads(ours, threads=["orphan"], min_idle=0)
        stored = app_saver.get_tuple(config("orphan"))
    assert report.threads_repaired == 0 and report.skipped == {"moved_on": 1}
    assert stored is not None
    assert stored.checkpoint["channel_values"]["messages"][-1].content == "written by the app"
    assert "orphan" in broken


def test_a_store_of_another_layout_beside_the_shallow_one_is_refused(redis_url: str) -> None:
    asyncio.run(seeded(redis_url, is_async=False))
    with RedisSaver.from_conn_string(redis_url) as full:
        full.setup()
        asyncio.run(seed(Store(full, is_async=False), prefix="full-"))
    with redis.Redis.from_url(redis_url) as client:
        for pointer in list(client.scan_iter(match="checkpoint_latest:*")):
            client.delete(pointer)  # as a saver that keeps no pointer would have it
    before = dumps(redis_url)

    done = run_cli("scan", redis_url, "--min-idle", "0")

    assert done.returncode == EXIT_USAGE, done.stderr
    assert "the shallow savers keep one document a pair" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and dumps(redis_url) == before


def test_prune_on_a_shallow_store_says_there_is_nothing_to_delete(redis_url: str) -> None:
    asyncio.run(seeded(redis_url, is_async=False))
    before = dumps(redis_url)
    done = run_cli("prune", redis_url, "--min-idle", "0")
    assert done.returncode == EXIT_USAGE
    assert "a shallow Redis store keeps one checkpoint a thread" in done.stderr
    assert dumps(redis_url) == before


@pytest.mark.parametrize("saver_class", [RedisSaver, ShallowRedisSaver], ids=lambda c: c.__name__)
def test_a_thread_waiting_on_a_human_is_listed_with_its_question(
    redis_url: str, saver_class: Any
) -> None:
    from tests.support import asking_graphs

    with saver_class.from_conn_string(redis_url) as saver:
        saver.setup()
        graph = asking_graphs.build("one_task", saver)
        asyncio.run(Store(saver, is_async=False).invoke(graph, {"out": ""}, config("waiting")))

    code, scanned, err = command("scan", redis_url, "--waiting", "--min-idle", "0", "--json")

    assert code == EXIT_OK, err
    (waiting,) = scanned["waiting"]
    assert waiting["thread_id"] == "waiting"
    assert [(q["value"], q["node"]) for q in waiting["interrupts"]] == [
        ("approve the refund?", "ask")
    ]


def test_a_key_of_the_applications_own_is_not_taken_for_a_checkpoint(redis_url: str) -> None:
    with redis.Redis.from_url(redis_url) as client:
        client.set("checkpoint:notes", "the application's own key")
    broken = asyncio.run(seeded(redis_url, is_async=False))

    code, scanned, err = command("scan", redis_url, "--min-idle", "0", "--json")

    assert code == EXIT_OK, err
    assert scanned["threads_needing_repair"] == len(broken)
