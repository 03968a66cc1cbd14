"""The LangGraph.js application bricks a thread for real, as the issue measured it."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_runs import run_cli
from tests.support.js_app import JsApp
from tests.support.js_rows import langgraph_js_sqlite_store, langgraph_js_store


def test_a_thread_interrupted_before_its_tools_is_bricked_by_a_new_message(js_app: JsApp) -> None:
    js_app.brick("t1")
    again = js_app.turn("t1", "hello?")
    assert not again["ok"]
    assert "Missing: call_0" in again["error"]


def test_a_thread_resumed_runs_its_tools_and_answers(js_app: JsApp) -> None:
    asked = js_app.turn("t1", "weather in Rome")
    assert asked["next"] == ["tools"]
    resumed = js_app.resume("t1")
    assert resumed["ok"] and resumed["next"] == []
    assert [m["type"] for m in resumed["messages"]] == ["human", "ai", "tool", "ai"]
    assert resumed["messages"][-1]["content"] == "The tool says: sunny in Rome"
    answered = js_app.turn("t1", "thanks")
    assert answered["messages"][-1]["content"] == "You said: thanks"


def test_the_hand_written_store_of_the_docs_is_one_the_application_reads(
    pg_js_app: JsApp, pg_uri: str
) -> None:
    js_app = pg_js_app
    langgraph_js_store(pg_uri, ["doc-1"])
    state = js_app.state("doc-1")
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "human"]
    failed = js_app.turn("doc-1", "hello?")
    assert not failed["ok"] and "Missing: call_0" in failed["error"]
    done = run_cli("repair", pg_uri, "--min-idle", "0")
    assert done.returncode == 0, done.stderr
    assert js_app.turn("doc-1", "hello again")["ok"]


def test_the_hand_written_sqlite_store_of_the_docs_is_one_the_application_reads(
    js_installed: None, tmp_path: Path
) -> None:
    path = tmp_path / "js-threads.sqlite"
    langgraph_js_sqlite_store(path, ["doc-1"])
    js_app = JsApp.on_file(path)
    state = js_app.state("doc-1")
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "human"]
    failed = js_app.turn("doc-1", "hello?")
    assert not failed["ok"] and "Missing: call_0" in failed["error"]
    done = run_cli("repair", js_app.target, "--min-idle", "0")
    assert done.returncode == 0, done.stderr
    assert js_app.turn("doc-1", "hello again")["ok"]
