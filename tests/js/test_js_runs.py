"""Everything a run does on a Python store, on a LangGraph.js store (PostgreSQL and
SQLite): scan, list, show and
dry run write nothing, --min-idle waits, shards cover every thread once, runs at once
repair each thread once, an application's write wins, and the async API does the same."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import timedelta
from subprocess import PIPE
from typing import Any

import pytest

from langgraph_checkpoint_repair.batch import (
    arepair_threads,
    aundo_run,
    repair_threads,
)
from langgraph_checkpoint_repair.js import values as js_values
from langgraph_checkpoint_repair.stores.postgres.js_saver import JsPostgresSaver
from langgraph_checkpoint_repair.stores.sqlite.js_saver import JsSqliteSaver
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.cli_runs import last_json, run_cli
from tests.support.js_app import JsApp, assert_js_format_only, stored_rows

BRICKED = ["b1", "b2", "b3", "b4"]


def bricked_store(js_app: JsApp, threads: list[str]) -> None:
    """Bricked threads, and a healthy one that answered."""
    for thread_id in threads:
        js_app.brick(thread_id)
    assert js_app.turn("fine", "hello")["ok"]


def saver_class(js_app: JsApp) -> Any:
    """The class of the saver a run opens on the application's store."""
    return JsSqliteSaver if js_app.on_sqlite else JsPostgresSaver


def cli_json(*argv: str) -> dict[str, Any]:
    done = run_cli(*argv)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def repaired_threads(target: str) -> Counter[str]:
    return Counter(c[0] for c in stored_rows(target).checkpoints if "langgraph_repair_run" in c[3])


def test_scan_list_show_and_dry_run_write_nothing(js_app: JsApp) -> None:
    bricked_store(js_app, BRICKED[:2])
    before = stored_rows(js_app.target)
    scanned = run_cli("scan", js_app.target, "--min-idle", "0", "--json")
    assert scanned.returncode == 0, scanned.stderr
    report = last_json(scanned.stdout)
    assert report["threads_scanned"] == 3 and report["threads_needing_repair"] == 2
    assert report["errors"] == [] and report["refused_types"] == []
    listed = run_cli("scan", js_app.target, "--min-idle", "0", "--list")
    assert sorted(line.split("\t")[0] for line in listed.stdout.splitlines()) == ["b1", "b2"]
    shown = run_cli("show", js_app.target, "--thread", "b1", "--json")
    preview = last_json(shown.stdout)
    assert [m["type"] for m in preview["after"]] == ["human", "ai", "tool", "human"]
    assert preview["after"][2]["synthetic"] and preview["after"][2]["tool_call_id"] == "call_0"
    dry = run_cli("repair", js_app.target, "--min-idle", "0", "--dry-run", "--json")
    assert last_json(dry.stdout)["threads_needing_repair"] == 2
    assert stored_rows(js_app.target) == before


def test_min_idle_leaves_threads_written_recently(js_app: JsApp) -> None:
    bricked_store(js_app, BRICKED[:1])
    before = stored_rows(js_app.target)
    done = run_cli("repair", js_app.target, "--json")
    report = last_json(done.stdout)
    assert report["skipped"] == {"recent": 1} and report["threads_repaired"] == 0
    assert stored_rows(js_app.target) == before


def test_shards_repair_every_thread_once(js_app: JsApp) -> None:
    bricked_store(js_app, BRICKED)
    reports = [
        cli_json("repair", js_app.target, "--min-idle", "0", "--shard", f"{k}/2", "--json")
        for k in (0, 1)
    ]
    assert sum(r["threads_repaired"] for r in reports) == len(BRICKED)
    assert sum(r["threads_scanned"] for r in reports) == len(BRICKED) + 1
    assert repaired_threads(js_app.target) == {t: 1 for t in BRICKED}
    assert js_app.turn("b3", "hello again")["ok"]
    assert_js_format_only(stored_rows(js_app.target))


def test_two_runs_at_once_repair_each_thread_once(js_app: JsApp) -> None:
    bricked_store(js_app, BRICKED)
    command = [sys.executable, "-m", "langgraph_checkpoint_repair.cli", "repair", js_app.target]
    command += ["--min-idle", "0", "--json"]
    runs = [subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True) for _ in "ab"]
    reports = [last_json(run.communicate(timeout=120)[0]) for run in runs]
    assert sum(r["threads_repaired"] for r in reports) == len(BRICKED)
    assert repaired_threads(js_app.target) == {t: 1 for t in BRICKED}
    for thread_id in BRICKED:
        assert js_app.turn(thread_id, "hello again")["ok"]


def test_an_application_write_while_the_thread_is_repaired_wins(
    js_app: JsApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The application writes to the thread right after the run loaded its head."""
    bricked_store(js_app, ["b1"])
    get_tuple = saver_class(js_app).get_tuple
    written: list[Any] = []

    def loaded_then_written(saver: Any, config: Any) -> Any:
        tup = get_tuple(saver, config)
        configurable = config["configurable"]
        if configurable["thread_id"] == "b1" and configurable.get("checkpoint_id") and not written:
            written.append(js_app.turn("b1", "me again"))
        return tup

    monkeypatch.setattr(saver_class(js_app), "get_tuple", loaded_then_written)
    with open_saver(js_app.target, pool_size=2) as saver:
        report = repair_threads(saver, min_idle=timedelta(0))
    monkeypatch.undo()
    assert written and not written[0]["ok"]  # still bricked when the application wrote
    [thread] = [t for t in report.threads if t.thread_id == "b1"]
    assert thread.outcome in ("moved_on", "superseded")
    _, head, _ = stored_rows(js_app.target).head("b1")
    assert head["channel_versions"]["messages"] == max(head["channel_versions"].values())
    assert js_app.state("b1")["messages"][-1]["content"] == "me again"
    with open_saver(js_app.target, pool_size=2) as saver:
        again = repair_threads(saver, min_idle=timedelta(0))
    assert [t.thread_id for t in again.threads if t.outcome == "repaired"] == ["b1"]
    assert js_app.turn("b1", "hello again")["ok"]
    assert_js_format_only(stored_rows(js_app.target))


async def test_the_async_api_repairs_and_undoes_in_the_store_format(js_app: JsApp) -> None:
    bricked_store(js_app, BRICKED[:2])
    bricked = js_app.state("b1")
    async with aopen_saver(js_app.target, pool_size=2) as saver:
        report = await arepair_threads(saver, min_idle=timedelta(0))
    assert report.threads_repaired == 2
    assert js_app.turn("b2", "hello again")["ok"]
    assert_js_format_only(stored_rows(js_app.target))
    async with aopen_saver(js_app.target, pool_size=2) as saver:
        undone = await aundo_run(saver, report.run_id)
    assert undone.threads_restored == 1 and undone.threads_skipped == 1  # b2 moved on
    assert js_app.state("b1")["messages"] == bricked["messages"]
    assert not js_app.turn("b1", "hello?")["ok"]
    assert_js_format_only(stored_rows(js_app.target))


def test_a_healthy_head_is_cleared_without_being_loaded(
    js_app: JsApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LangGraph.js's first look proves a healthy head clean from its stored JSON: only
    the bricked head is loaded, and only its values are revived into LangChain objects."""
    bricked_store(js_app, ["b1"])
    asked = js_app.turn("tools", "weather in Rome")
    assert asked["next"] == ["tools"] and js_app.resume("tools")["ok"]
    saver_type = saver_class(js_app)
    get_tuple, loads_js = saver_type.get_tuple, js_values.loads_js
    loaded: list[str] = []
    revived: list[bytes] = []

    def counted_load(saver: Any, config: Any) -> Any:
        loaded.append(config["configurable"]["thread_id"])
        return get_tuple(saver, config)

    def counted_revival(blob: bytes) -> Any:
        revived.append(blob)
        return loads_js(blob)

    monkeypatch.setattr(saver_type, "get_tuple", counted_load)
    monkeypatch.setattr(js_values, "loads_js", counted_revival)
    with open_saver(js_app.target, read_only=True) as saver:
        report = repair_threads(saver, dry_run=True, min_idle=timedelta(0))
        assert report.threads_scanned == 3 and report.threads_needing_repair == 1
        assert loaded == ["b1"]
        during_scan, revived[:] = list(revived), []
        saver.get_tuple({"configurable": {"thread_id": "b1", "checkpoint_ns": ""}})
    assert sorted(during_scan) == sorted(revived)  # the bricked head's values, no others
