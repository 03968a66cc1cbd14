"""A LangGraph.js application's store pruned by the command: each thread keeps its head
and what it needs, reads the same to the application, goes on (a thread waiting before
its tools runs them on resume), and `undo` puts every row back as it was."""

from __future__ import annotations

from typing import Any

from tests.support.cli_runs import last_json, run_cli
from tests.support.js_app import JsApp, StoredRows, assert_js_format_only, stored_rows


def prune(target: str, *more: str) -> dict[str, Any]:
    done = run_cli("prune", target, "--min-idle", "0", "--json", *more)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def talked(js_app: JsApp) -> dict[str, dict[str, Any]]:
    """A thread of three plain turns and one waiting before its tools, as the
    application sees them."""
    for text in ("hello", "how are you", "bye"):
        assert js_app.turn("chat", text)["ok"]
    asked = js_app.turn("asking", "weather in Paris")
    assert asked["next"] == ["tools"], asked
    return {thread: js_app.state(thread) for thread in ("chat", "asking")}


def checkpoints_of(rows: StoredRows, thread_id: str) -> list[str]:
    return [cid for thread, cid, _, _ in rows.checkpoints if thread == thread_id]


def test_a_js_store_loses_rows_reads_the_same_and_goes_on(js_app: JsApp) -> None:
    seen = talked(js_app)
    before = stored_rows(js_app.target)

    report = prune(js_app.target)

    after = stored_rows(js_app.target)
    assert report["skipped"] == {} and report["threads_pruned"] == 2
    assert checkpoints_of(after, "chat") == [before.head("chat")[0]]
    assert checkpoints_of(after, "asking") == [before.head("asking")[0]]
    assert report["checkpoints_deleted"] == len(before.checkpoints) - 2
    assert {thread: js_app.state(thread) for thread in seen} == seen
    assert_js_format_only(after)
    resumed = js_app.resume("asking")
    assert resumed["messages"][-2]["content"] == "sunny in Paris"
    answered = js_app.turn("chat", "again")
    assert answered["messages"][-1]["content"] == "You said: again"
    assert len(answered["messages"]) == len(seen["chat"]["messages"]) + 2


def test_undo_puts_a_js_stores_rows_back_and_the_application_goes_on(js_app: JsApp) -> None:
    seen = talked(js_app)
    before = stored_rows(js_app.target)
    run_id = prune(js_app.target)["run_id"]

    done = run_cli("undo", js_app.target, "--run", run_id, "--json")

    assert done.returncode == 0, done.stderr
    assert stored_rows(js_app.target) == before
    assert {thread: js_app.state(thread) for thread in seen} == seen
    assert js_app.resume("asking")["messages"][-2]["content"] == "sunny in Paris"


def test_a_compacting_prune_with_a_graph_prunes_a_js_store_as_a_plain_one(js_app: JsApp) -> None:
    """LangGraph.js keeps no delta channels: `--compact --graph` writes no snapshot (one
    would be in Python's format) and leaves what a plain prune leaves."""
    seen = talked(js_app)
    before = stored_rows(js_app.target)
    graph = ("--graph", "tests.support.release_graphs:release_2_asking")

    report = prune(js_app.target, "--compact", *graph)

    after = stored_rows(js_app.target)
    assert report["skipped"] == {} and report["threads_compacted"] == 0
    assert checkpoints_of(after, "chat") == [before.head("chat")[0]]
    assert_js_format_only(after)
    assert {thread: js_app.state(thread) for thread in seen} == seen
