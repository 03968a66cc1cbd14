"""A `redis://` TARGET over LangGraph.js's Redis layout (@langchain/langgraph-checkpoint-redis,
installed from the npm registry as the other LangGraph.js tests install theirs), on a
real Redis server: the LangGraph.js application bricks a thread, `scan` finds it, a dry
run changes no key, `repair` writes one checkpoint in LangGraph.js's format with the
thread's time to live, the application goes on, and undo takes the repair back; a
prune keeps each thread reading the same and a question waiting, and its undo puts
every key back."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")

import redis

from langgraph_checkpoint_repair.batch import (
    aprune_threads,
    arepair_threads,
    aundo_prune,
    aundo_run,
)
from langgraph_checkpoint_repair.cli.exits import EXIT_OK, EXIT_USAGE
from langgraph_checkpoint_repair.stores.redis.js_saver import AsyncJsRedisSaver
from tests.support import js_app
from tests.support.cli_runs import run_cli
from tests.support.js_app import JsApp
from tests.support.redis_keys import command, dumps

TTL_MS = 3_600_000


@pytest.fixture
def app(redis_url: str) -> JsApp:
    js_app.installed()
    return JsApp.on_redis(redis_url)


def with_ttl(url: str, thread_id: str) -> None:
    """The thread's keys expire, as those of an application with `defaultTTL` do."""
    with redis.Redis.from_url(url) as client:
        for key in client.scan_iter(match=f"*:{thread_id}:*"):
            client.pexpire(key, TTL_MS)


def documents(url: str, thread_id: str) -> dict[str, Any]:
    """The thread's checkpoint documents, by key."""
    with redis.Redis.from_url(url, decode_responses=True) as client:
        keys = sorted(client.scan_iter(match=f"checkpoint:{thread_id}:*"))
        return {key: client.json().get(key) for key in keys}


def test_a_bricked_langgraphjs_thread_is_repaired_and_the_application_goes_on(
    redis_url: str, app: JsApp
) -> None:
    app.brick("bricked")
    app.turn("healthy", "hello")
    with_ttl(redis_url, "bricked")
    before = dumps(redis_url)

    code, scanned, err = command("scan", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert [t["thread_id"] for t in scanned["threads"]] == ["bricked"]
    assert scanned["threads_scanned"] == 2 and dumps(redis_url) == before
    code, repaired, err = command("repair", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert repaired["threads_repaired"] == 1

    added = {k: v for k, v in dumps(redis_url).items() if k not in before}
    assert {k for k in before if before[k] != dumps(redis_url)[k]} == set()  # appended only
    head_key, head = max(documents(redis_url, "bricked").items())
    assert head_key.encode() in added and head["parent_checkpoint_id"]
    assert all(type(v) is int for v in head["checkpoint"]["channel_versions"].values())
    assert "langchain_core" in json.dumps(head["checkpoint"]) + json.dumps(added_blobs(redis_url))
    with redis.Redis.from_url(redis_url) as client:
        assert all(0 < client.pttl(key) <= TTL_MS for key in added)
    assert command("repair", redis_url, "--min-idle", "0", "--json")[1]["threads_repaired"] == 0

    going_on = app.turn("bricked", "hello again")
    assert going_on["ok"] and going_on["messages"][-1]["content"] == "You said: hello again"
    types = [m["type"] for m in going_on["messages"]]
    assert types[:3] == ["human", "ai", "tool"]


def added_blobs(url: str) -> list[Any]:
    with redis.Redis.from_url(url, decode_responses=True) as client:
        return [client.json().get(k) for k in client.scan_iter(match="checkpoint_blob:bricked:*")]


def test_undo_takes_the_repair_back_and_leaves_every_key_it_found(
    redis_url: str, app: JsApp
) -> None:
    app.brick("bricked")
    before = dumps(redis_url)
    code, repaired, err = command("repair", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err

    code, undone, err = command("undo", redis_url, "--run", repaired["run_id"], "--json")

    assert code == EXIT_OK, err
    assert undone["threads_restored"] == 1
    after = dumps(redis_url)
    assert {k: after[k] for k in before} == before
    failed = app.turn("bricked", "still there?")
    assert not failed["ok"] and "call_0" in failed["error"]  # the history as it was


async def test_the_async_store_repairs_and_its_undo_leaves_a_turn_taken_since(
    redis_url: str, app: JsApp
) -> None:
    app.brick("bricked")
    saver = AsyncJsRedisSaver(redis_url)
    try:
        report = await arepair_threads(saver, min_idle=0)
        assert report.threads_repaired == 1
        assert app.turn("bricked", "hello again")["ok"]
        assert (await aundo_run(saver, report.run_id)).threads_restored == 0  # it moved on
        state, before = app.state("bricked"), dumps(redis_url)
        pruned = await aprune_threads(saver, min_idle=timedelta(0))
        assert pruned.threads_pruned == 1 and app.state("bricked") == state
        assert (await aundo_prune(saver, pruned.run_id)).threads_restored == 1  # type: ignore[union-attr]
        after = dumps(redis_url)
        assert {k: after.get(k) for k in before} == before
    finally:
        await saver._redis.aclose()


def test_a_thread_waiting_on_a_human_is_left_to_its_answer(redis_url: str, app: JsApp) -> None:
    asked = app.run("ask", "waiting")
    assert [q["value"] for q in asked["interrupts"]] == ["q1"]
    before = dumps(redis_url)
    code, repaired, err = command("repair", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err
    assert repaired["threads_repaired"] == 0 and dumps(redis_url) == before
    answered = app.run("answer", "waiting", "yes")
    assert [q["value"] for q in answered["interrupts"]] == ["q2"]


def test_a_python_savers_thread_beside_langgraphjs_ones_refuses_the_run(
    redis_url: str, app: JsApp
) -> None:
    from langgraph.checkpoint.redis.shallow import ShallowRedisSaver

    from tests.support.seeding import seed
    from tests.support.stores import Store

    app.brick("bricked")
    with ShallowRedisSaver.from_conn_string(redis_url) as shallow:
        shallow.setup()
        asyncio.run(seed(Store(shallow, is_async=False), bricked=1))
    before = dumps(redis_url)

    done = run_cli("repair", redis_url, "--min-idle", "0")

    assert done.returncode == EXIT_USAGE, done.stderr
    assert "another saver" in done.stderr  # whichever layout the first key read is
    assert len(done.stderr.strip().splitlines()) == 1 and dumps(redis_url) == before


def test_a_prune_keeps_each_thread_reading_the_same_and_undo_puts_every_key_back(
    redis_url: str, app: JsApp
) -> None:
    for turn in ("hello", "weather in Oslo"):
        app.turn("talked", turn)
    app.resume("talked")
    app.run("ask", "waiting")
    with_ttl(redis_url, "talked")
    seen = {t: app.state(t) for t in ("talked",)}
    before = dumps(redis_url)

    code, dry, err = command("prune", redis_url, "--min-idle", "0", "--dry-run", "--json")
    assert code == EXIT_OK, err
    assert dumps(redis_url) == before
    code, pruned, err = command("prune", redis_url, "--min-idle", "0", "--json")
    assert code == EXIT_OK, err

    assert pruned["threads_pruned"] == 2 and pruned["checkpoints_deleted"] > 4
    assert pruned["blobs_deleted"] > 0
    assert {k: dry[k] for k in ("checkpoints_deleted", "blobs_deleted", "writes_deleted")} == {
        k: pruned[k] for k in ("checkpoints_deleted", "blobs_deleted", "writes_deleted")
    }
    assert {t: app.state(t) for t in seen} == seen
    code, undone, err = command("undo", redis_url, "--run", pruned["run_id"], "--json")
    assert code == EXIT_OK, err
    assert undone["rows_restored"]["checkpoints"] == pruned["checkpoints_deleted"]
    assert undone["rows_restored"]["blobs"] == pruned["blobs_deleted"]
    after = dumps(redis_url)
    assert {k: v for k, v in after.items() if not k.startswith(b"langgraph_repair:")} == before

    command("prune", redis_url, "--min-idle", "0")
    answered = app.run("answer", "waiting", "yes")
    assert [q["value"] for q in answered["interrupts"]] == ["q2"]  # the question was kept
    going_on = app.turn("talked", "hello again")
    assert going_on["ok"] and going_on["messages"][-1]["content"] == "You said: hello again"
