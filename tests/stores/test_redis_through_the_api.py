"""The official Redis savers reached through their API alone (a `module:attr` target), on
a real Redis server with RedisJSON and RediSearch: undo works although the savers refuse
a metadata filter on our key, and no run reports an all-clear for threads the saver
lists but cannot load, or may not have listed at all."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the dev extra")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint
from langgraph.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph.checkpoint.redis.ashallow import AsyncShallowRedisSaver
from langgraph.checkpoint.redis.shallow import ShallowRedisSaver

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.cli.exits import EXIT_OK, EXIT_THREAD_FAILED
from langgraph_checkpoint_repair.stores.generic.listing import SaverListing
from tests.support.agents import chat_graph
from tests.support.cli_runs import last_json, run_cli
from tests.support.delta_agents import delta_chat, messages_of
from tests.support.redis_factories import REDIS_ENV
from tests.support.seeding import SUBGRAPH_HISTORY, config, put_in_namespace, seed
from tests.support.stores import Store

FACTORIES = "tests.support.redis_factories"


def command(redis_url: str, *argv: str) -> tuple[int, str, str]:
    done = run_cli(*argv, **{REDIS_ENV: redis_url})
    return done.returncode, done.stdout, done.stderr


def seeded_full_store(redis_url: str) -> list[str]:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        return asyncio.run(seed(Store(saver, is_async=False))).broken


@pytest.mark.parametrize("factory", ["redis_saver", "async_redis_saver"])
def test_undo_works_on_a_saver_that_refuses_our_metadata_filter(
    redis_url: str, factory: str
) -> None:
    broken = seeded_full_store(redis_url)
    target = f"{FACTORIES}:{factory}"
    with RedisSaver.from_conn_string(redis_url) as saver, pytest.raises(ValueError, match="filter"):
        list(saver.list(None, filter={"langgraph_repair_run": "any"}))

    code, out, err = command(redis_url, "repair", target, "--min-idle", "0", "--json")
    repaired = last_json(out)
    assert code == EXIT_OK, err
    assert repaired["threads_repaired"] == len(broken)
    assert command(redis_url, "scan", target, "--min-idle", "0", "--json")[0] == EXIT_OK

    code, out, err = command(redis_url, "undo", target, "--run", repaired["run_id"], "--json")
    assert code == EXIT_OK, err
    assert last_json(out)["threads_restored"] == len(broken)
    again = last_json(command(redis_url, "scan", target, "--min-idle", "0", "--json")[1])
    assert again["threads_needing_repair"] == len(broken)


def test_a_shallow_store_the_saver_cannot_load_is_never_an_all_clear(redis_url: str) -> None:
    with ShallowRedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        asyncio.run(seed(Store(saver, is_async=False)))
        listed = {tup.config["configurable"]["thread_id"] for tup in saver.list(None)}

    code, out, _ = command(redis_url, "scan", f"{FACTORIES}:shallow_redis_saver", "--json")
    report = last_json(out)
    assert code == EXIT_THREAD_FAILED
    unloadable = {
        e["thread_id"] for e in report["errors"] if "get_tuple finds nothing" in e["error"]
    }
    assert unloadable == listed - {"subgraph"}  # the subgraph's own namespace still loads
    assert report["listed_by_saver"]["threads"] == len(listed)


async def put_threads(redis_url: str, count: int) -> None:
    async with AsyncShallowRedisSaver.from_conn_string(redis_url) as saver:
        store = Store(saver, is_async=True)
        for n in range(count):
            await put_in_namespace(store, f"t-{n:03}", "", SUBGRAPH_HISTORY)


def test_a_listing_that_stops_at_a_round_count_is_said_to_be_one(redis_url: str) -> None:
    asyncio.run(put_threads(redis_url, 150))
    target = f"{FACTORIES}:async_shallow_redis_saver"

    code, out, _ = command(redis_url, "scan", target, "--json")
    assert last_json(out)["listed_by_saver"] == {
        "checkpoints": 100, "threads": 100, "may_be_capped": True
    }  # fmt: skip
    assert code == EXIT_THREAD_FAILED  # 50 threads were never seen: no all-clear
    code, out, err = command(redis_url, "scan", target)
    assert "listed by the saver's API" in out and "100 checkpoints of 100 threads" in out
    assert "warning: the saver's list() handed out exactly 100 checkpoints" in err
    assert code == EXIT_THREAD_FAILED


@pytest.mark.parametrize(
    ("checkpoints", "capped"), [(0, False), (99, False), (100, True), (250, False), (10_000, True)]
)
def test_only_a_round_count_of_checkpoints_may_be_a_cap(checkpoints: int, capped: bool) -> None:
    listing = SaverListing(checkpoints=checkpoints)
    assert listing.may_be_capped is capped


def listed(thread_id: str, n: int, metadata: dict[str, Any]) -> CheckpointTuple:
    where = {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": f"{n:04}"}
    return CheckpointTuple({"configurable": where}, empty_checkpoint(), metadata)  # type: ignore[arg-type]


def test_what_the_listing_saw_is_counted_by_thread_and_delta_namespace() -> None:
    listing = SaverListing()
    counted = {"counters_since_delta_snapshot": {"messages": 2}}
    for n, (thread_id, metadata) in enumerate([("a", {}), ("a", counted), ("b", {})]):
        listing.saw(listed(thread_id, n, metadata))
    shown: dict[str, Any] = listing.to_json()
    assert shown == {"checkpoints": 3, "threads": 2, "may_be_capped": False}
    assert listing.delta_namespaces == {("a", "")}


async def delta_threads(saver: AsyncRedisSaver) -> Any:
    """Three delta threads: "cut" by the saver's own prune, "whole", and "updated",
    which began with `update_state` (a chain that starts with no parent, and is whole)."""
    store = Store(saver, is_async=True)
    delta = delta_chat(saver)
    for thread_id in ("cut", "whole"):
        for turn in range(4):  # the head is no snapshot: it is rebuilt from its chain
            await store.invoke(delta, {"messages": [HumanMessage(f"t{turn}")]}, config(thread_id))
    await delta.aupdate_state(config("updated"), {"messages": [HumanMessage("seeded")]})
    await store.invoke(delta, {"messages": [HumanMessage("next")]}, config("updated"))
    await saver.aprune(["cut"])  # the saver's keep_latest: the chain back to the seed goes
    return delta


@pytest.mark.parametrize("factory", ["redis_saver", "async_redis_saver"])
async def test_a_chain_the_savers_own_prune_cut_is_found_through_the_api(
    redis_url: str, factory: str
) -> None:
    async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
        delta = await delta_threads(saver)
        assert await messages_of(Store(saver, is_async=True), delta, config("cut")) == []

    code, out, err = command(redis_url, "scan", f"{FACTORIES}:{factory}", "--min-idle", "0",
                             "--json")  # fmt: skip
    report = last_json(out)
    assert code == EXIT_OK, err
    assert report["skipped"] == {"history_lost": 1}
    assert report["findings"] == {"delta_seed_missing": 1}
    lost = {
        t["thread_id"]: [f["code"] for f in t["findings"]]
        for t in report["threads"] if t["outcome"] == "history_lost"
    }  # fmt: skip
    assert lost == {"cut": ["delta_seed_missing"]}


async def two_threads(store: Store) -> tuple[Any, Any]:
    """A delta thread and a plain one, four turns each, through the wrapper."""
    delta, plain = delta_chat(store.saver), chat_graph(store.saver)
    for turn in range(4):
        await store.invoke(delta, {"messages": [HumanMessage(f"d{turn}")]}, config("delta"))
        await store.invoke(plain, {"messages": [HumanMessage(f"p{turn}")]}, config("plain"))
    return delta, plain


async def checkpoints_of(store: Store, thread_id: str) -> int:
    if store.is_async:
        return len([t async for t in store.saver.alist(config(thread_id))])
    return len(list(store.saver.list(config(thread_id))))


@pytest.mark.parametrize("is_async", [False, True], ids=["RedisSaver", "AsyncRedisSaver"])
async def test_the_wrappers_prune_keeps_a_delta_thread_instead_of_the_savers_own(
    redis_url: str, is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The saver's own prune would keep one checkpoint of the delta thread and cut the
    chain its messages are rebuilt from; the wrapper prunes its keys as the command
    does."""
    async with contextlib.AsyncExitStack() as stack:
        if is_async:
            inner: Any = await stack.enter_async_context(
                AsyncRedisSaver.from_conn_string(redis_url)
            )
        else:
            inner = stack.enter_context(RedisSaver.from_conn_string(redis_url))
            inner.setup()
        store = Store(PatchingCheckpointer(inner), is_async=is_async)
        delta, _ = await two_threads(store)
        delta_before = await checkpoints_of(store, "delta")
        messages = await messages_of(store, delta, config("delta"))

        with caplog.at_level(logging.WARNING, logger="langgraph_checkpoint_repair"):
            if is_async:
                await store.saver.aprune(["delta", "plain"])
            else:
                store.saver.prune(["delta", "plain"])

        assert await checkpoints_of(store, "plain") == 1
        assert 1 < await checkpoints_of(store, "delta") <= delta_before
        assert "prune left thread" not in caplog.text
        if is_async:  # the sync saver's own reads of delta channels lose writes
            assert await messages_of(store, delta, config("delta")) == messages
