"""The LangGraph.js application bricks a thread for real, as the issue measured it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.support.cli_runs import last_json, run_cli
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


def test_hostile_rows_of_a_langgraph_js_sqlite_store_are_reported_not_crashed_on(
    tmp_path: Path,
) -> None:
    """A row cut short is `undecodable`, one holding a class other than messages is
    `refused_type`; the bricked thread beside them is repaired, and they are not written."""
    path = tmp_path / "js-threads.sqlite"
    langgraph_js_sqlite_store(path, ["cut", "foreign", "bricked"])
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 99) WHERE thread_id = 'cut'"
        )
        (row,) = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = 'foreign'"
        ).fetchone()
        planted = json.loads(row)
        planted["channel_values"]["prompt"] = {
            "lc": 1, "type": "constructor", "id": ["langchain_core", "prompts", "PromptTemplate"],
            "kwargs": {"template": "{x}"},
        }  # fmt: skip
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'foreign'",
            (json.dumps(planted).encode(),),
        )
    done = run_cli("repair", f"sqlite:///{path}", "--min-idle", "0", "--json")
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert report["threads_repaired"] == 1 and report["errors"] == []
    assert report["skipped"] == {"unreadable": 1, "refused_type": 1}
    assert report["refused_types"] == ["langchain_core.prompts.PromptTemplate"]
    with sqlite3.connect(path) as conn:
        counts = dict(
            conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id")
        )
    assert counts == {"cut": 1, "foreign": 1, "bricked": 2}
