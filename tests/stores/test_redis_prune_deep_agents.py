"""Retention on a real Redis server with the threads real agents write: `prune redis://`
keeps each thread reading the same (a prebuilt agent, a thread waiting on a human, a
deep agent's delta chains), a dry run changes no key, the keys it deletes expire no
later than they would have, and undo RESTOREs every key byte for byte with its TTL; the
wrapper's prune keeps a delta thread reading the same."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

import asyncio

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.redis import AsyncRedisSaver
from langgraph.types import Command

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch.pruning import aprune_threads
from langgraph_checkpoint_repair.cli.exits import EXIT_OK
from langgraph_checkpoint_repair.stores.redis.prune_base import NOT_COMPACTED
from tests.retention.test_prune_deep_agent_reasons import write_files
from tests.retention.test_prune_delta_threads import talked
from tests.stores.test_redis_prune import NOW, thread_keys
from tests.support import asking_graphs
from tests.support.agents import ToolBox, react_agent
from tests.support.delta_agents import deep_agent, delta_chat
from tests.support.fakes import calls, model
from tests.support.pruning import seen, thread
from tests.support.redis_keys import command, dumps, ttls
from tests.support.stores import Store

TTL_MINUTES = 60


async def seeded(url: str) -> dict[str, Any]:
    """A prebuilt agent that called a tool, a thread waiting on a human and a deep agent
    that wrote files, on an AsyncRedisSaver with a TTL; each thread's graph."""
    async with AsyncRedisSaver.from_conn_string(url, ttl={"default_ttl": TTL_MINUTES}) as saver:
        store = Store(saver, is_async=True)
        replies = model(calls(("get_weather", "c1"), city="Oslo"), "Sunny.", "Still sunny.")
        agent = react_agent(replies, ToolBox(), saver)
        await store.invoke(agent, {"messages": [HumanMessage("Weather?")]}, thread("agent"))
        await store.invoke(agent, {"messages": [HumanMessage("And now?")]}, thread("agent"))
        asking = asking_graphs.build("one_task", saver)
        await asking_graphs.answer_first(store, asking, "one_task", thread("waiting"))
        deep = await write_files(store, "deep", 3)
        await talked(store, "chat", 7)
    return {"agent": agent, "waiting": asking, "deep": deep}


async def states(url: str, graphs: dict[str, Any]) -> dict[str, Any]:
    """What the application sees of each thread, through the raw saver."""
    async with AsyncRedisSaver.from_conn_string(url) as saver:
        store = Store(saver, is_async=True)
        return {
            name: await seen(store, _on(graph, saver), thread(name))
            for name, graph in graphs.items()
        }


def _on(graph: Any, saver: Any) -> Any:
    return graph.copy(update={"checkpointer": saver})


def test_a_prune_keeps_every_thread_reading_the_same_and_undo_puts_every_key_back(
    redis_url: str,
) -> None:
    graphs = asyncio.run(seeded(redis_url))
    graphs["chat"] = talked_graph()
    before, lives, read = dumps(redis_url), ttls(redis_url), asyncio.run(states(redis_url, graphs))

    code, dry, err = command("prune", redis_url, "--min-idle", "0", "--dry-run", "--json")
    assert code == EXIT_OK, err
    assert dumps(redis_url) == before
    code, pruned, err = command("prune", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err

    assert {k: v for k, v in dry.items() if k not in ("run_id", "dry_run", "archived")} == {
        k: v for k, v in pruned.items() if k not in ("run_id", "dry_run", "archived")
    }
    assert (pruned["threads_scanned"], pruned["threads_pruned"]) == (4, 3)
    assert pruned["checkpoints_deleted"] > 10
    assert pruned["skipped"] == {"delta_chain": 1}  # the deep agent's files: its chain stays
    assert asyncio.run(states(redis_url, graphs)) == read
    left = ttls(redis_url)
    archive = [key for key in left if key.startswith(b"langgraph_repair:pruned_")]
    assert archive and all(0 < left[key] <= max(lives.values()) for key in archive)

    code, undone, err = command("undo", redis_url, "--run", pruned["run_id"], "--json")
    assert code == EXIT_OK, err
    assert undone["rows_restored"]["checkpoints"] == pruned["checkpoints_deleted"]
    after = dumps(redis_url)
    assert {k: v for k, v in after.items() if not k.startswith(b"langgraph_repair:")} == before
    restored = ttls(redis_url)
    assert all(0 < restored[key] <= lives[key] for key in before)


def talked_graph() -> Any:
    """The graph `talked` writes with, for reading its thread through another saver."""
    return delta_chat(None)


def test_the_application_goes_on_after_a_prune(redis_url: str) -> None:
    graphs = asyncio.run(seeded(redis_url))
    code, _, err = command("prune", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err

    async def going_on() -> None:
        async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
            store = Store(saver, is_async=True)
            agent = react_agent(model("Rain later."), ToolBox(), saver)
            done = await store.invoke(
                agent, {"messages": [HumanMessage("Later?")]}, thread("agent")
            )
            assert [m.content for m in done["messages"]][-2:] == ["Later?", "Rain later."]
            answered = await store.invoke(
                _on(graphs["waiting"], saver), Command(resume="no"), thread("waiting")
            )
            assert answered["out"].endswith("'yes'+'no'")
            write = calls(("write_file", "w9"), file_path="/f9.txt", content="file 9")
            deep = deep_agent(model(write, "Done."), ToolBox(), saver)
            await store.invoke(deep, {"messages": [HumanMessage("One more.")]}, thread("deep"))
            files = (await store.get_state(deep, thread("deep"))).values["files"]
            assert sorted(files) == ["/f0.txt", "/f1.txt", "/f2.txt", "/f9.txt"]

    asyncio.run(going_on())
    code, scanned, err = command("scan", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert scanned["threads_needing_repair"] == 0 and not scanned.get("findings")


async def test_compact_keeps_a_redis_threads_chain_and_says_why(redis_url: str) -> None:
    graphs = await seeded(redis_url)
    read = await states(redis_url, {"deep": graphs["deep"], "chat": talked_graph()})
    outcomes: list[Any] = []
    async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
        report = await aprune_threads(saver, min_idle=NOW, compact=True, on_thread=outcomes.append)
    assert report.threads_compacted == 0
    assert report.skipped == {"delta_not_compacted": 1}  # the deep agent, as it was
    assert report.threads_pruned == 3  # the chat thread too: pruned back to its seed
    (deep,) = [o for o in outcomes if o.thread_id == "deep"]
    assert NOT_COMPACTED in deep.detail
    assert await states(redis_url, {"deep": graphs["deep"], "chat": talked_graph()}) == read


async def test_the_wrappers_prune_over_a_redis_saver_keeps_a_delta_thread(
    redis_url: str,
) -> None:
    async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
        store = Store(saver, is_async=True)
        graph = await talked(store, "deep", 7)
        before = await seen(store, graph, thread("deep"))
        checkpoints = len(thread_keys(redis_url, "deep"))
        wrapper = PatchingCheckpointer(saver)

        await wrapper.aprune(["deep"])

        assert 1 < len(thread_keys(redis_url, "deep")) < checkpoints
        assert await seen(store, graph, thread("deep")) == before
        await store.invoke(graph, {"messages": [HumanMessage("more")]}, thread("deep"))
        assert len((await store.get_state(graph, thread("deep"))).values["messages"]) == 16
    assert not [k for k in dumps(redis_url) if k.startswith(b"langgraph_repair:")]
