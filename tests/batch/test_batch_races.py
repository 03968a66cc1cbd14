"""Races on a live store: an application writing while a thread is repaired, and
several runs repairing one store at once (real savers, real processes)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from subprocess import PIPE
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.decisions.ids import id_after
from langgraph_checkpoint_repair.decisions.plan import RUN_KEY
from tests.support.agents import chat_graph
from tests.support.app_writer import GRAPH_ENV
from tests.support.batch_runs import head_messages, run_repair
from tests.support.oracle import assert_valid
from tests.support.postgres_threads import hold_claim
from tests.support.seeding import (
    BROKEN_THREADS,
    config,
    seed,
    seed_broken,
)
from tests.support.stores import Store, cli_store

APP_MESSAGE = "me again"


@contextlib.asynccontextmanager
async def application_saver(
    store: Store, request: pytest.FixtureRequest
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The saver the application writes through: its own connection on PostgreSQL; on
    SQLite and in memory the store's own saver, the only way into the repair's write
    transaction (another connection waits for it to end)."""
    if not isinstance(store.saver, (PostgresSaver, AsyncPostgresSaver)):
        yield store.saver
    elif store.is_async:
        async with AsyncPostgresSaver.from_conn_string(request.getfixturevalue("pg_uri")) as app:
            yield app
    else:
        with PostgresSaver.from_conn_string(request.getfixturevalue("pg_uri")) as sync_app:
            yield sync_app


class SlowApplicationWrite:
    """An application write to one thread that starts when the job loads that thread's
    head (the application's checkpoint, and so its id, is made then) and is stored only
    right before the job's repair is: a slow network or a busy lock in between. Hooked
    into the saver class's own methods, so every saver involved plays along."""

    def __init__(self, app: BaseCheckpointSaver[Any], thread_id: str) -> None:
        self.app, self.thread_id = app, thread_id
        self.state = "waiting"  # -> deferring -> deferred -> stored
        self.deferred: tuple[Any, ...] = ()

    def update(self) -> tuple[Any, Any]:
        return config(self.thread_id), {"messages": [HumanMessage(APP_MESSAGE)]}

    def starts_on(self, cfg: Any) -> bool:
        configurable = cfg["configurable"]
        found = configurable["thread_id"] == self.thread_id and configurable.get("checkpoint_id")
        return self.state == "waiting" and bool(found)

    def defers(self, cfg: Any) -> bool:
        """The application's own put, while other threads of the job go on writing."""
        return self.state == "deferring" and cfg["configurable"]["thread_id"] == self.thread_id

    def deferred_config(self, args: tuple[Any, ...]) -> Any:
        self.deferred = args
        configurable = args[1]["configurable"]
        return {"configurable": {**configurable, "checkpoint_id": args[2]["id"]}}

    def stores_now(self, cfg: Any, metadata: Any) -> bool:
        repair = cfg["configurable"]["thread_id"] == self.thread_id and RUN_KEY in metadata
        if self.state == "deferred" and repair:
            self.state = "stored"
            return True
        return False

    def patch(self, monkeypatch: pytest.MonkeyPatch, cls: Any) -> None:
        get_tuple, aget_tuple, put, aput = cls.get_tuple, cls.aget_tuple, cls.put, cls.aput

        def hooked_get_tuple(saver: Any, cfg: Any) -> Any:
            tup = get_tuple(saver, cfg)
            if self.starts_on(cfg):
                self.state = "deferring"
                chat_graph(self.app).update_state(*self.update(), as_node="chat")
                self.state = "deferred"
            return tup

        async def hooked_aget_tuple(saver: Any, cfg: Any) -> Any:
            tup = await aget_tuple(saver, cfg)
            if self.starts_on(cfg):
                self.state = "deferring"
                await chat_graph(self.app).aupdate_state(*self.update(), as_node="chat")
                self.state = "deferred"
            return tup

        def hooked_put(saver: Any, cfg: Any, checkpoint: Any, metadata: Any, new: Any) -> Any:
            if self.defers(cfg):
                return self.deferred_config((saver, cfg, checkpoint, metadata, new))
            if self.stores_now(cfg, metadata):
                put(*self.deferred)
            return put(saver, cfg, checkpoint, metadata, new)

        async def hooked_aput(
            saver: Any, cfg: Any, checkpoint: Any, metadata: Any, new: Any
        ) -> Any:
            if self.defers(cfg):
                return self.deferred_config((saver, cfg, checkpoint, metadata, new))
            if self.stores_now(cfg, metadata):
                await aput(*self.deferred)
            return await aput(saver, cfg, checkpoint, metadata, new)

        monkeypatch.setattr(cls, "get_tuple", hooked_get_tuple)
        monkeypatch.setattr(cls, "aget_tuple", hooked_aget_tuple)
        monkeypatch.setattr(cls, "put", hooked_put)
        monkeypatch.setattr(cls, "aput", hooked_aput)


async def test_an_application_write_in_the_window_stays_the_head(
    store: Store, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = await seed(store, bricked=1)
    racer = seeded.of("bricked")[0]
    async with application_saver(store, request) as app:
        slow = SlowApplicationWrite(app, racer)
        slow.patch(monkeypatch, type(store.saver))
        report = await run_repair(store)
        monkeypatch.undo()
    assert slow.state == "stored"
    head = await head_messages(store, racer)
    assert head[-1].content == APP_MESSAGE
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes[racer] == "superseded"
    assert report.threads_repaired == len(seeded.broken) - 1
    assert report.skipped["superseded"] == 1
    assert report.checkpoints_written == len(seeded.broken)

    again = await run_repair(store)
    assert {t.thread_id for t in again.threads if t.outcome == "repaired"} == {racer}
    repaired = await head_messages(store, racer)
    assert_valid(repaired)
    assert APP_MESSAGE in [m.content for m in repaired]


def repair_command(target: str) -> list[str]:
    return [sys.executable, "-m", "langgraph_checkpoint_repair.cli", "repair", target]


def report_of(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    parsed: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return parsed


def repairs_per_thread(saver: BaseCheckpointSaver[Any]) -> Counter[str]:
    return Counter(
        t.config["configurable"]["thread_id"] for t in saver.list(None) if RUN_KEY in t.metadata
    )


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
async def test_two_runs_at_once_repair_each_thread_exactly_once(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        thread_ids = await seed_broken(store, BROKEN_THREADS)
        command = [*repair_command(target), "--min-idle", "0", "--json"]
        runs = [subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True) for _ in "ab"]
        reports = [report_of(run) for run in runs]
        assert repairs_per_thread(store.saver) == {t: 1 for t in thread_ids}
        for thread_id in thread_ids:
            assert_valid(await head_messages(store, thread_id))
    assert sum(r["threads_repaired"] for r in reports) == BROKEN_THREADS
    for report in reports:
        assert report["errors"] == []
        left_alone = report["skipped"].get("claimed", 0) + report["skipped"].get("moved_on", 0)
        assert report["threads_repaired"] + left_alone == report["threads_needing_repair"]


APPLICATIONS = 3
ROOT = Path(__file__).resolve().parents[2]


def start_application(
    target: str, stop: Path, seed: int, threads: list[str], graph: str = "chat"
) -> Any:
    command = [
        sys.executable,
        "-m",
        "tests.support.app_writer",
        target,
        str(stop),
        str(seed),
        *threads,
    ]
    env = {**os.environ, GRAPH_ENV: graph}
    return subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True, cwd=ROOT, env=env)


def wait_until_writing(app: Any, stop: Path) -> None:
    if app.stdout.readline().strip() != "ready":
        stop.touch()
        pytest.fail(app.stderr.read())


def written_by(app: Any) -> dict[str, list[str]]:
    out, err = app.communicate(timeout=60)
    assert app.returncode == 0, err
    written: dict[str, list[str]] = json.loads(out.strip().splitlines()[-1])
    return written


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
async def test_applications_writing_during_a_run_lose_no_message(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    stop = tmp_path / "stop"
    with cli_store(kind, request) as (target, store):
        thread_ids = await seed_broken(store, BROKEN_THREADS)
        apps = [  # each its own threads: two writers of one thread would race each other
            start_application(target, stop, n, thread_ids[n::APPLICATIONS])
            for n in range(APPLICATIONS)
        ]
        for app in apps:
            wait_until_writing(app, stop)
        command = [*repair_command(target), "--min-idle", "0", "--json"]
        try:
            report = report_of(subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True))
        finally:
            stop.touch()
        written = [written_by(app) for app in apps]
        for thread_id in thread_ids:
            texts = [m.content for m in await head_messages(store, thread_id)]
            for app_written in written:
                mine = app_written.get(thread_id, [])
                assert [t for t in texts if t in mine] == mine, thread_id
    assert report["errors"] == []


def test_a_repair_id_sorts_right_after_its_source_and_before_anything_later() -> None:
    step = 3
    for _ in range(200):
        source = str(uuid6(clock_seq=step))
        repair = id_after(source, step)
        later = str(uuid6(clock_seq=step))
        assert source < repair < later
        assert (uuid.UUID(repair).version, uuid.UUID(repair).variant) == (6, uuid.RFC_4122)
    assert id_after("1f0a0000-0000-6000-bfff-ffffffffffff", 1) == (
        "1f0a0000-0000-6001-8000-000000000000"
    )
    assert id_after(id_after(source, step), step) > id_after(source, step)
    assert id_after("not-a-uuid", step) > "1"


async def test_two_runs_at_once_on_any_saver_leave_one_repair_per_thread() -> None:
    store = Store(InMemorySaver(), is_async=False)
    thread_ids = await seed_broken(store, 60)
    settings: dict[str, Any] = {"min_idle": timedelta(0), "concurrency": 4}
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(repair_threads, store.saver, **settings) for _ in "ab"]
        reports = [run.result() for run in runs]
    assert repairs_per_thread(store.saver) == {t: 1 for t in thread_ids}
    assert sum(r.threads_repaired for r in reports) >= len(thread_ids)
    for thread_id in thread_ids:
        assert_valid(await head_messages(store, thread_id))


async def test_a_thread_another_run_holds_is_skipped_as_claimed_on_postgres(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        thread_ids = await seed_broken(store, 3)
        held = thread_ids[1]
        with psycopg.connect(pg_uri, autocommit=True) as other_run:
            hold_claim(other_run, held)
            report = await run_repair(store)
        assert {t.thread_id: t.outcome for t in report.threads} == {
            thread_ids[0]: "repaired",
            held: "claimed",
            thread_ids[2]: "repaired",
        }
        assert repairs_per_thread(store.saver) == {thread_ids[0]: 1, thread_ids[2]: 1}
        assert (await run_repair(store)).threads_repaired == 1
        assert repairs_per_thread(store.saver) == {t: 1 for t in thread_ids}
