"""A `redis://` TARGET on a real Redis server with RedisJSON and RediSearch: the store
of langgraph-checkpoint-redis read through its own keys. Every thread is found however
many checkpoints the store holds, every pending write is seen whatever the saver's
`has_writes` flag says, a repair's keys expire with their thread, a dry run changes
no key, undo takes the repair back, and an operator's mistake is one line, exit 2."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")

import redis
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph.checkpoint.redis.shallow import ShallowRedisSaver

from langgraph_checkpoint_repair.cli.exits import EXIT_OK, EXIT_USAGE
from langgraph_checkpoint_repair.stores.base import Selection
from langgraph_checkpoint_repair.stores.redis import RedisStore
from langgraph_checkpoint_repair.stores.redis.saver import AsyncRedisStoreSaver, RedisStoreSaver
from tests.stores.test_redis_through_the_api import delta_threads
from tests.support.agents import ToolBox, react_agent
from tests.support.batch_runs import run_repair, run_undo
from tests.support.cli_runs import last_json, run_cli
from tests.support.delta_agents import brick_deep_agent_by_a_trim, deep_agent
from tests.support.fakes import calls, model
from tests.support.histories import ai, human
from tests.support.seeding import SUBGRAPH_HISTORY, config, seed
from tests.support.stores import Store

HEALTHY = [human("a"), ai("a1", text="hello")]


def command(*argv: str) -> tuple[int, str, str]:
    done = run_cli(*argv)
    return done.returncode, done.stdout, done.stderr


def keyspace(url: str) -> dict[bytes, bytes | None]:
    """Every key with its value as the server serializes it (DUMP)."""
    with redis.Redis.from_url(url) as client:
        return {key: client.dump(key) for key in client.scan_iter(count=1000)}


def put_chain(saver: Any, thread_id: str, messages: list[Any], length: int) -> None:
    """`length` checkpoints of one thread, each on the one before, through the saver."""
    where: Any = config(thread_id)
    for step in range(length):
        checkpoint = empty_checkpoint()
        version = saver.get_next_version(None, None)
        checkpoint["channel_values"] = {"messages": messages}
        checkpoint["channel_versions"] = {"messages": version}
        metadata: Any = {"source": "loop", "step": step}
        where = saver.put(where, checkpoint, metadata, {"messages": version})


def test_threads_past_the_savers_listing_cap_are_all_found(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        bricked = [f"bricked-{n}" for n in range(3)]
        for thread_id in bricked:  # the oldest: past the newest 10,000 the saver lists
            put_chain(saver, thread_id, SUBGRAPH_HISTORY, 5)
        for n in range(2_100):
            put_chain(saver, f"healthy-{n:04}", HEALTHY, 5)
        listed = {tup.config["configurable"]["thread_id"] for tup in saver.list(None)}
    assert len(listed) == 2_000 and not listed & set(bricked)  # 10,000 checkpoints

    code, out, err = command("scan", redis_url, "--min-idle", "0", "--json")
    report = last_json(out)
    assert code == EXIT_OK, err
    assert report["threads_scanned"] == 2_103
    assert sorted(t["thread_id"] for t in report["threads"]) == bricked
    assert "listed_by_saver" not in report  # the driver reads the store itself


def wait_for_weather(saver: RedisSaver) -> Any:
    """A prebuilt agent stopped before its tool node, as a worker finds it."""
    agent = react_agent(model(calls(("get_weather", "c1"), city="Oslo"), "Sunny."), ToolBox(),
                        saver, interrupt_before=["tools"])  # fmt: skip
    agent.invoke({"messages": [HumanMessage("Weather?")]}, config("worker"))
    return agent


def test_a_tool_result_the_saver_does_not_flag_is_seen(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        agent = wait_for_weather(saver)
        state = agent.get_state(config("worker"))
        result = ToolMessage("sunny in Oslo", tool_call_id="c1", name="get_weather", id="r1")
        # The worker stores its task's result, then dies before the next checkpoint.
        saver.put_writes(state.config, [("messages", result)], state.tasks[0].id)
        # RedisSaver stores has_writes false when its put lands after the writes (9 of 20
        # checkpoints on a four-turn agent here); its own get_tuple then skips them.
        head = saver._make_redis_checkpoint_key(
            "worker", "", state.config["configurable"]["checkpoint_id"]
        )
        saver._redis.json().set(head, "$.has_writes", False)
        assert saver.get_tuple(config("worker")).pending_writes == []  # type: ignore[union-attr]
    before = keyspace(redis_url)

    code, out, err = command("repair", redis_url, "--min-idle", "0", "--json")
    report = last_json(out)
    assert code == EXIT_OK, err
    assert report["threads_repaired"] == 0 and report["skipped"] == {"in_flight": 1}
    assert keyspace(redis_url) == before


def test_a_repair_keeps_its_threads_ttl_and_undo_takes_it_back(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url, ttl={"default_ttl": 60}) as saver:
        saver.setup()
        broken = asyncio.run(seed(Store(saver, is_async=False), bricked=1)).broken
    before = keyspace(redis_url)
    code, out, err = command("repair", redis_url, "--min-idle", "0", "--dry-run", "--json")
    assert code == EXIT_OK, err
    assert last_json(out)["threads_needing_repair"] == len(broken)
    assert keyspace(redis_url) == before

    code, out, err = command("repair", redis_url, "--min-idle", "0", "--json")
    repaired = last_json(out)
    assert code == EXIT_OK, err
    assert repaired["threads_repaired"] == len(broken)
    with redis.Redis.from_url(redis_url) as client:
        written = [key for key in client.scan_iter(count=1000) if key not in before]
        expiring = {key: client.ttl(key) for key in written}
    assert written and all(0 < ttl <= 3_600 for ttl in expiring.values()), expiring

    with RedisSaver.from_conn_string(redis_url) as saver:  # the raw saver runs on
        saver.setup()
        agent = react_agent(model("Here is the weather."), ToolBox(), saver)
        agent.invoke({"messages": [HumanMessage("And now?")]}, config("bricked-0"))
        assert agent.get_state(config("bricked-0")).values["messages"][-1].content == (
            "Here is the weather."
        )

    code, out, err = command("undo", redis_url, "--run", repaired["run_id"], "--json")
    assert code == EXIT_OK, err
    assert last_json(out)["threads_restored"] == len(broken) - 1  # bricked-0 went on


async def test_the_async_store_repairs_and_undoes(redis_url: str) -> None:
    async with AsyncRedisStoreSaver.from_conn_string(redis_url) as saver:
        store = Store(saver, is_async=True)
        broken = (await seed(store)).broken
        repaired = await run_repair(store)
        assert repaired.threads_repaired == len(broken)
        assert (await run_repair(store, dry_run=True)).threads_needing_repair == 0
        assert (await run_undo(store, repaired.run_id)).threads_restored == len(broken)
        assert (await run_repair(store, dry_run=True)).threads_needing_repair == len(broken)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def with_user(url: str) -> str:
    """`url` for a user of the server's own whose password is not the one given."""
    with redis.Redis.from_url(url) as client:
        client.acl_setuser("operator", enabled=True, passwords=["+right-one"], keys=["*"],
                           commands=["+@all"])  # fmt: skip
    return url.replace("redis://", "redis://operator:wrong-one@")


@pytest.mark.parametrize("mistake", ["nothing listening", "not a url", "wrong password",
                                     "no checkpoints"])  # fmt: skip
def test_an_operators_mistake_is_one_line_and_writes_nothing(redis_url: str, mistake: str) -> None:
    target = {
        "nothing listening": lambda: f"redis://127.0.0.1:{free_port()}/0",
        "not a url": lambda: redis_url.rsplit(":", 1)[0] + ":port/0",
        "wrong password": lambda: with_user(redis_url),
        "no checkpoints": lambda: redis_url,
    }[mistake]()
    before = keyspace(redis_url)
    code, out, err = command("repair", target, "--min-idle", "0")
    assert code == EXIT_USAGE
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "wrong-one" not in err + out
    assert keyspace(redis_url) == before
    said = {"nothing listening": "cannot connect to Redis", "not a url": "not a Redis URL",
            "wrong password": "cannot connect to Redis", "no checkpoints": "no "
            "langgraph-checkpoint-redis index"}  # fmt: skip
    assert said[mistake] in err


def test_heads_come_in_pages_and_each_once(redis_url: str) -> None:
    with RedisStoreSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        for n in range(25):
            put_chain(saver, f"t-{n:02}", HEALTHY, 2)
        store = RedisStore(saver)
        pages = list(store.pages(Selection(page_size=10)))
    heads = list(itertools.chain.from_iterable(pages))
    assert [len(page) for page in pages] == [10, 10, 5]
    assert sorted(h.thread_id for h in heads) == [f"t-{n:02}" for n in range(25)]


async def test_a_bricked_deep_agent_is_repaired_and_goes_on(redis_url: str) -> None:
    replies = model("Hello.", calls(("ls", "c9")), "Done.")
    async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
        await brick_deep_agent_by_a_trim(Store(saver, is_async=True), config("deep"), replies)
    code, out, err = command("repair", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert last_json(out)["threads_repaired"] == 1
    async with AsyncRedisSaver.from_conn_string(redis_url) as saver:  # the raw saver
        agent = deep_agent(model("Back again."), ToolBox(), saver)
        await agent.ainvoke({"messages": [HumanMessage("Hello?")]}, config("deep"))
        messages = (await agent.aget_state(config("deep"))).values["messages"]
    assert messages[-1].content == "Back again."
    code, out, _ = command("scan", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK and last_json(out)["threads_needing_repair"] == 0


def test_a_chain_the_savers_own_prune_cut_is_found(redis_url: str) -> None:
    async def seeded() -> None:
        async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
            await delta_threads(saver)

    asyncio.run(seeded())
    code, out, err = command("scan", redis_url, "--min-idle", "0", "--json")
    report = last_json(out)
    assert code == EXIT_OK, err
    assert report["findings"] == {"delta_seed_missing": 1}
    assert [t["thread_id"] for t in report["threads"]] == ["cut"]


def test_a_store_holding_another_savers_layout_is_refused(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        asyncio.run(seed(Store(saver, is_async=False)))
    with ShallowRedisSaver.from_conn_string(redis_url) as shallow:
        shallow.setup()
        asyncio.run(seed(Store(shallow, is_async=False), prefix="shallow-"))
    before = keyspace(redis_url)
    code, out, err = command("repair", redis_url, "--min-idle", "0")
    assert code == EXIT_USAGE, out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "7 of the store's 14 (thread, namespace) pairs hold checkpoints but no" in err
    assert keyspace(redis_url) == before
    code, out, err = command("scan", redis_url, "--thread", "bricked-0", "--min-idle", "0")
    assert code == EXIT_OK, err  # a thread named is read where its pointer is
