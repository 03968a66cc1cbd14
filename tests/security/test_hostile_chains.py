"""A delta thread whose parent chain loops (A's parent is B, B's parent is A, written
straight into the rows) hangs no walk: the batch job reports that thread under `errors`
and repairs the others, the wrapper fails open, on every real saver and on the base
class's default history walk."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch import RunReport, arepair_threads, repair_threads
from langgraph_checkpoint_repair.compatibility.features import has_delta_channels
from langgraph_checkpoint_repair.delta import chains
from langgraph_checkpoint_repair.delta.chains import BrokenChain
from tests.support.cli_runs import last_json, run_cli
from tests.support.histories import ai, human
from tests.support.seeding import config
from tests.support.stores import Store

pytestmark = pytest.mark.skipif(
    not has_delta_channels(), reason="delta channels need langgraph 1.2"
)
WAIT = 60.0
"""Seconds a sync walk may take before the test calls it a hang."""


def chat(saver: Any) -> Any:
    """A chat graph over a delta `messages` channel that never snapshots on its own."""
    from tests.support.delta_agents import REDUCERS, delta_state

    builder = StateGraph(delta_state(REDUCERS["deepagents"], every=1000))
    builder.add_node("chat", lambda state: {"messages": [AIMessage("hi", id="hi")]})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


async def seed_threads(store: Store) -> None:
    """`cyclic`: a clean history whose chain is then made to loop; `broken`: an orphan call."""
    graph = chat(store.saver)
    for n in range(4):
        await store.update_state(graph, config("cyclic"), {"messages": [human(f"m{n}")]}, "chat")
    await store.update_state(graph, config("broken"), {"messages": [human("q")]}, "chat")
    await store.update_state(graph, config("broken"), {"messages": [ai("a1", "c1")]}, "chat")
    await store.update_state(graph, config("broken"), {"messages": [human("again")]}, "chat")


async def make_cycle(store: Store, sqlite_path: Path) -> None:
    """Point the head's grandparent back at the head's parent, in the stored rows."""
    ids = [
        t.config["configurable"]["checkpoint_id"]
        for t in await store.list(store.saver, config("cyclic"))
    ]
    parent, grandparent = ids[1], ids[2]
    saver: Any = store.saver
    if isinstance(saver, InMemorySaver):
        checkpoint, metadata, _ = saver.storage["cyclic"][""][grandparent]
        saver.storage["cyclic"][""][grandparent] = (checkpoint, metadata, parent)
        return
    update = "UPDATE checkpoints SET parent_checkpoint_id = {p} WHERE checkpoint_id = {p}"
    if "sqlite" in type(saver).__module__:
        with sqlite3.connect(sqlite_path) as conn:
            conn.execute(update.format(p="?"), (parent, grandparent))
    elif store.is_async:
        await saver.conn.execute(update.format(p="%s"), (parent, grandparent))
    else:
        saver.conn.execute(update.format(p="%s"), (parent, grandparent))


def within(seconds: float, work: Any) -> Any:
    """Run `work()` in a thread; a walk still going after `seconds` fails the test."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["value"] = work()
        except Exception as error:
            done["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the walk did not end"
    if "error" in done:
        raise done["error"]
    return done["value"]


async def repaired(store: Store) -> RunReport:
    if store.is_async:
        return await asyncio.wait_for(arepair_threads(store.saver, min_idle=0), WAIT)
    report: RunReport = within(WAIT, lambda: repair_threads(store.saver, min_idle=0))
    return report


def assert_cycle_reported(report: RunReport) -> None:
    assert [e["thread_id"] for e in report.errors] == ["cyclic"], report.errors
    assert "cyclic parent chain" in report.errors[0]["error"]
    assert report.threads_repaired == 1
    assert [t.thread_id for t in report.threads] == ["broken"]


async def test_a_cyclic_chain_is_reported_and_the_run_goes_on(store: Store, tmp_path: Path) -> None:
    await seed_threads(store)
    await make_cycle(store, tmp_path / "threads.sqlite")
    assert_cycle_reported(await repaired(store))


async def test_the_wrapper_fails_open_on_a_cyclic_chain(store: Store, tmp_path: Path) -> None:
    await seed_threads(store)
    await make_cycle(store, tmp_path / "threads.sqlite")
    wrapped = PatchingCheckpointer(store.saver)
    where = config("cyclic")
    if store.is_async:
        loaded = await asyncio.wait_for(wrapped.aget_tuple(where), WAIT)
        assert loaded is not None
        with pytest.raises(BrokenChain):
            await wrapped.aget_delta_channel_history(config=loaded.config, channels=["messages"])
    else:
        loaded = within(WAIT, lambda: wrapped.get_tuple(where))
        assert loaded is not None
        with pytest.raises(BrokenChain):
            within(
                WAIT,
                lambda: wrapped.get_delta_channel_history(
                    config=loaded.config, channels=["messages"]
                ),
            )
    assert "messages" not in loaded.checkpoint["channel_values"]  # as stored, not rebuilt


class DefaultWalkSaver(InMemorySaver):
    """A saver that keeps the base class's own history walk, as most third-party ones do."""

    if has_delta_channels():
        get_delta_channel_history = BaseCheckpointSaver.get_delta_channel_history
        aget_delta_channel_history = BaseCheckpointSaver.aget_delta_channel_history


@pytest.mark.parametrize("is_async", [False, True])
async def test_the_default_walk_is_guarded(is_async: bool, tmp_path: Path) -> None:
    store = Store(DefaultWalkSaver(), is_async=is_async)
    await seed_threads(store)
    clean_history = await store.get_tuple(store.saver, config("broken"))
    assert clean_history is not None
    await make_cycle(store, tmp_path / "unused.sqlite")
    assert_cycle_reported(await repaired(store))


async def test_scan_on_postgres_reports_the_cyclic_thread(pg_uri: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        await seed_threads(store)
        await make_cycle(store, Path("unused"))
    done = run_cli("scan", pg_uri, "--min-idle", "0", "--json")
    assert done.returncode == 1, done.stderr
    summary = last_json(done.stdout)
    assert [e["thread_id"] for e in summary["errors"]] == ["cyclic"]
    assert summary["threads_needing_repair"] == 1
    shown = run_cli("show", pg_uri, "--thread", "cyclic")
    assert shown.returncode == 2, shown.stderr
    assert shown.stderr.startswith("langgraph-repair: error: cyclic parent chain")
    assert len(shown.stderr.splitlines()) == 1


@pytest.mark.parametrize("saver_class", [InMemorySaver, DefaultWalkSaver])
async def test_a_chain_longer_than_the_limit_is_refused(
    saver_class: type[InMemorySaver], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(saver_class(), is_async=False)
    await seed_threads(store)
    monkeypatch.setattr(chains, "MAX_CHAIN", 2)  # `cyclic` has four ancestors, no seed
    report = await repaired(store)
    assert [e["thread_id"] for e in report.errors] == ["cyclic"], report.errors
    assert "parent chain longer than 2 checkpoints" in report.errors[0]["error"]


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_failed_page_walk_falls_back_to_reading_each_thread(
    is_async: bool, pg_uri: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The server really fails the page's history query (a division by zero planted in
    the SQL it runs): the page's heads are read one by one, and the broken one is still
    found and repaired."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from langgraph_checkpoint_repair.stores.postgres import base as sql

    def failing_walk(channel: str, keys: Any, js_only: bool = False) -> tuple[str, dict[str, Any]]:
        return "SELECT 1 / (count(*) - count(*)) FROM checkpoints", {}

    if is_async:
        async with AsyncPostgresSaver.from_conn_string(pg_uri) as apg:
            await apg.setup()
            await seed_threads(Store(apg, is_async=True))
            monkeypatch.setattr(sql, "delta_walk_query", failing_walk)
            report = await arepair_threads(apg, min_idle=0)
    else:
        with PostgresSaver.from_conn_string(pg_uri) as pg:
            pg.setup()
            await seed_threads(Store(pg, is_async=False))
            monkeypatch.setattr(sql, "delta_walk_query", failing_walk)
            report = repair_threads(pg, min_idle=0)
    assert "history query failed, reading threads one by one" in caplog.text
    assert "division by zero" in caplog.text
    assert report.errors == []
    assert report.threads_repaired == 1
    assert [t.thread_id for t in report.threads] == ["broken"]
