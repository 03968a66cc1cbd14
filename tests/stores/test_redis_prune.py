"""Retention on a real Redis server with RedisJSON and RediSearch: `prune redis://` deletes
whole idle threads but not one waiting on a human, and undo RESTOREs every key; an
application writing between the plan and the delete leaves the thread as it was; the
wrapper's prune over a Redis saver prunes as the command does; shards cover every
thread once; what Redis does not do is said in one line (the deep agents' threads:
`test_redis_prune_deep_agents`)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")

import redis
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.redis import AsyncRedisSaver, RedisSaver

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch.pruning import (
    forget_run,
    prune_threads,
    undo_prune,
)
from langgraph_checkpoint_repair.cli.exits import EXIT_OK, EXIT_USAGE
from langgraph_checkpoint_repair.stores.redis.prune import RedisPruner
from langgraph_checkpoint_repair.stores.redis.running import StepRunner
from langgraph_checkpoint_repair.stores.redis.steps import Commit
from tests.support import asking_graphs
from tests.support.cli_runs import run_cli
from tests.support.pruning import plain_chat, seen, thread
from tests.support.redis_keys import command, dumps
from tests.support.stores import Store

TTL_MINUTES = 60
NOW = timedelta(0)


def thread_keys(url: str, thread_id: str) -> list[bytes]:
    """The saver's keys of one thread (its documents, writes, registry and pointers)."""
    with redis.Redis.from_url(url) as client:
        return sorted(client.scan_iter(match=f"*:{thread_id}:*", count=1000))


def test_delete_idle_deletes_a_thread_whole_but_not_one_waiting_on_a_human(
    redis_url: str,
) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        asyncio.run(store.invoke(plain_chat(saver), {"messages": []}, thread("idle")))
        asking = asking_graphs.build("one_task", saver)
        asyncio.run(asking_graphs.answer_first(store, asking, "one_task", thread("waiting")))
        question = asyncio.run(seen(store, asking, thread("waiting")))
        before = dumps(redis_url)

        kept = prune_threads(saver, min_idle=NOW, delete_idle=NOW)

        assert (kept.threads_pruned, kept.threads_deleted) == (2, 1)
        assert thread_keys(redis_url, "idle") == []
        assert saver.get_tuple(thread("idle")) is None
        assert asyncio.run(seen(store, asking, thread("waiting"))) == question
        undo_prune(saver, kept.run_id)
        assert {k: v for k, v in dumps(redis_url).items() if b"langgraph_repair" not in k} == before
        assert saver.get_tuple(thread("idle")) is not None
        assert not [k for k in dumps(redis_url) if k.startswith(b"langgraph_repair:pruned_")]
        again = prune_threads(saver, min_idle=NOW, delete_idle=NOW)
        assert (
            forget_run(saver, again.run_id)
            == again.deleted.rows["checkpoints"] + again.deleted.rows["writes"]
        )
        assert not [k for k in dumps(redis_url) if k.startswith(b"langgraph_repair:pruned_")]
        assert undo_prune(saver, again.run_id).threads_restored == 0  # type: ignore[union-attr]


class WritingRunner(StepRunner):
    """Runs a prune's steps, and has the application write a turn to the thread after
    the plan, before the transaction that deletes."""

    def __init__(self, saver: Any, app_turn: Any) -> None:
        super().__init__(saver)
        self.app_turn = app_turn

    def run(self, txn: Any, step: Any) -> Any:
        if isinstance(step, Commit) and self.app_turn is not None:
            self.app_turn()
            self.app_turn = None
        return super().run(txn, step)


def test_a_write_between_the_plan_and_the_delete_leaves_the_thread_as_it_was(
    redis_url: str,
) -> None:
    from langgraph_checkpoint_repair.batch.pruning import PruneReport, prune_one
    from langgraph_checkpoint_repair.retention.rules import PruneRules

    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        chat = plain_chat(saver)
        for _ in range(3):
            chat.invoke({"messages": [HumanMessage("hi")]}, thread("busy"))
        stored = set(dumps(redis_url))
        pruner = RedisPruner(saver)
        pruner.steps = WritingRunner(
            saver, lambda: chat.invoke({"messages": [HumanMessage("again")]}, thread("busy"))
        )
        report = PruneReport("run-race", dry_run=False, archived=True)

        outcome = prune_one(saver, pruner, report, "busy", PruneRules())

        assert outcome.skipped == "changed"
        assert stored <= set(dumps(redis_url))  # nothing deleted, the new turn kept
        assert len(chat.get_state(thread("busy")).values["messages"]) == 8
        assert prune_one(saver, RedisPruner(saver), report, "busy", PruneRules()).pruned


def test_the_sync_wrappers_prune_over_redis_saver(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        chat = plain_chat(saver)
        for _ in range(3):
            chat.invoke({"messages": [HumanMessage("hi")]}, thread("plain"))
        before = chat.get_state(thread("plain")).values
        PatchingCheckpointer(saver).prune(["plain"])
        assert chat.get_state(thread("plain")).values == before
        assert (
            len([k for k in thread_keys(redis_url, "plain") if k.startswith(b"checkpoint:")]) == 1
        )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("rollback", "--run", "run-x"), "rollback deletes rows of PostgreSQL and SQLite"),
        (("prune", "--vacuum"), "--vacuum"),
        (("forget", "--run", "run-nothing"), "no prune run 'run-nothing'"),
    ],
)
def test_what_redis_does_not_do_is_one_line(
    redis_url: str, argv: tuple[str, ...], said: str
) -> None:
    asyncio.run(seeded_plain(redis_url))
    before = dumps(redis_url)
    verb, *rest = argv
    done = (
        run_cli(verb, redis_url, "--min-idle", "0", *rest)
        if verb == "prune"
        else run_cli(verb, redis_url, *rest)
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert dumps(redis_url) == before


async def seeded_plain(url: str) -> None:
    async with AsyncRedisSaver.from_conn_string(url) as saver:
        await Store(saver, is_async=True).invoke(plain_chat(saver), {"messages": []}, thread("one"))


def test_shards_prune_every_thread_once(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        chat = plain_chat(saver)
        for n in range(6):
            for _ in range(2):
                chat.invoke({"messages": [HumanMessage("hi")]}, thread(f"t{n}"))
    scanned = 0
    for part in ("0/2", "1/2"):
        code, report, err = command(
            "prune", redis_url, "--min-idle", "0", "--shard", part, "--json"
        )
        assert code == EXIT_OK, err
        scanned += report["threads_scanned"]
        assert report["threads_pruned"] == report["threads_scanned"]
    assert scanned == 6
