"""A LangGraph.js thread whose `messages` is a delta channel (`MessagesDeltaValue`,
snapshotting every 3 updates), on PostgreSQL and SQLite: a call nothing answers is
found by `scan` (the first look walks a delta head, or takes it to a full load),
repaired in LangGraph.js's own format (its snapshot as LangGraph.js writes one: not a
list holding the list), undone, and after a second repair the application reads the
repaired history and goes on; `materialize` writes the whole value as a plain list,
which the application reads the same and goes on from."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from typing import Any

from tests.support.cli_runs import last_json, run_cli
from tests.support.js_app import JsApp, assert_js_format_only, stored_rows

TURNS = ["one", "call Oslo", "three", "four", "five"]


def run(command: str, target: str, *more: str) -> dict[str, Any]:
    done = run_cli(command, target, "--min-idle", "0", "--json", *more)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def talked(js_app: JsApp, thread_id: str = "delta") -> list[dict[str, Any]]:
    for text in TURNS:
        js_app.delta_turn(thread_id, text)
    messages: list[dict[str, Any]] = js_app.delta_turn(thread_id)["messages"]
    return messages


def test_a_broken_delta_thread_is_found_repaired_and_goes_on(js_app: JsApp) -> None:
    before = talked(js_app)
    scanned = run("scan", js_app.target)
    assert [t["actions"] for t in scanned["threads"]] == [{"messages": ["placeholder:call_1"]}]

    report = run("repair", js_app.target)
    assert report["actions"] == {"placeholder": 1}
    read = js_app.delta_turn("delta")["messages"]
    assert [m["type"] for m in read] == [m["type"] for m in before[:4]] + ["tool"] + [
        m["type"] for m in before[4:]
    ]
    undone = run_cli("undo", js_app.target, "--run", report["run_id"], "--json")
    assert last_json(undone.stdout)["threads_restored"] == 1
    assert [m["type"] for m in js_app.delta_turn("delta")["messages"]] == [
        m["type"] for m in before
    ]

    run("repair", js_app.target)
    went_on = js_app.delta_turn("delta", "six")
    assert went_on["messages"][-1]["content"] == "You said: six"
    assert_js_format_only(stored_rows(js_app.target))
    assert run("scan", js_app.target)["threads"] == []


def test_a_healthy_delta_thread_is_materialized_and_read_the_same(js_app: JsApp) -> None:
    for text in ("one", "two", "three", "four"):
        js_app.delta_turn("healthy", text)
    before = js_app.delta_turn("healthy")["messages"]
    assert run("scan", js_app.target)["threads"] == []

    report = run("materialize", js_app.target)
    assert (report["threads_repaired"], report["actions"]) == (1, {"materialized": 1})
    assert js_app.delta_turn("healthy")["messages"] == before
    assert_js_format_only(stored_rows(js_app.target))
    assert js_app.delta_turn("healthy", "five")["messages"][-1]["content"] == "You said: five"


REGENERATED = [*("one", "You said: one", "two", "You said: two", "three"), "Said again"]
LATER = ["four", "You said: four", "five", "You said: five"]


def regenerated(js_app: JsApp, thread_id: str = "regenerated") -> list[str]:
    """Three turns, the last answer made again, two turns more: the texts it reads."""
    for text in ("one", "two", "three"):
        js_app.delta_turn(thread_id, text)
    js_app.regenerate(thread_id)
    for text in ("four", "five"):
        js_app.delta_turn(thread_id, text)
    return texts(js_app, thread_id)


def texts(js_app: JsApp, thread_id: str) -> list[str]:
    return [m["content"] for m in js_app.delta_turn(thread_id)["messages"]]


def test_a_regenerate_that_kept_the_replaced_answer_is_proven_and_repaired(
    pg_js_app: JsApp,
) -> None:
    """On PostgreSQL, LangGraph.js 1.7.3 reads a regenerated thread with the answer it
    replaced still in it, and its next snapshot commits that."""
    read = regenerated(pg_js_app)
    assert read == [*REGENERATED[:-1], "You said: three", "Said again", *LATER]  # the brick
    before = stored_rows(pg_js_app.target)
    dry = run("repair", pg_js_app.target, "--prove-history", "--dry-run")
    assert dry["threads_needing_repair"] == 1
    assert stored_rows(pg_js_app.target) == before

    report = run("repair", pg_js_app.target, "--prove-history")
    assert report["actions"].get("delta_value_diverged", 0) >= 1
    assert texts(pg_js_app, "regenerated") == [*REGENERATED, *LATER]
    assert_js_format_only(stored_rows(pg_js_app.target))
    assert run("scan", pg_js_app.target, "--prove-history")["threads"] == []
    undone = run_cli("undo", pg_js_app.target, "--run", report["run_id"], "--json")
    assert last_json(undone.stdout)["threads_restored"] == 1
    assert texts(pg_js_app, "regenerated") == read
    run("repair", pg_js_app.target, "--prove-history")
    went_on = pg_js_app.delta_turn("regenerated", "six")["messages"]
    assert [m["content"] for m in went_on] == [*REGENERATED, *LATER, "six", "You said: six"]


def test_a_regenerate_is_flagged_only_where_it_reads_wrong(js_app: JsApp) -> None:
    """Where the fork reads right (SQLite stores its value with the checkpoint), every
    seed proves as stored."""
    read = regenerated(js_app)
    if js_app.target.startswith("sqlite:///"):
        assert read == [*REGENERATED, *LATER]
        assert run("scan", js_app.target, "--prove-history")["threads"] == []
    else:
        assert run("scan", js_app.target, "--prove-history")["threads_needing_repair"] == 1
