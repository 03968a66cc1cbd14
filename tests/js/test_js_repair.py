"""A LangGraph.js application's bricked thread, repaired by the command in the store's
own format: the application itself resumes, and `undo` brings the brick back."""

from __future__ import annotations

import json
from typing import Any

from tests.support.cli_runs import last_json, run_cli
from tests.support.js_app import (
    JsApp,
    StoredRows,
    assert_js_format_only,
    stored_rows,
    tag_head,
)
from tests.support.metadata import APP, SERVER

JS_CHECKPOINT_KEYS = {"v", "id", "ts", "versions_seen", "channel_versions"}


def repair(target: str, *more: str) -> dict[str, Any]:
    done = run_cli("repair", target, "--min-idle", "0", "--json", *more)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def test_the_application_resumes_after_repair_and_runs_its_tools_again(js_app: JsApp) -> None:
    js_app.brick("t1")
    report = repair(js_app.target)
    assert report["threads_repaired"] == 1
    assert report["actions"] == {"placeholder": 1}
    answered = js_app.turn("t1", "hello again")
    assert answered["ok"], answered
    assert answered["messages"][-1] == {
        "type": "ai", "content": "You said: hello again", "tool_calls": []
    }  # fmt: skip
    asked = js_app.turn("t1", "weather in Rome")
    assert asked["ok"] and asked["next"] == ["tools"]
    resumed = js_app.resume("t1")
    assert resumed["messages"][-2]["content"] == "sunny in Rome"
    assert resumed["messages"][-1]["content"] == "The tool says: sunny in Rome"
    assert_js_format_only(stored_rows(js_app.target))


def test_the_repair_is_written_as_langgraph_js_writes_a_checkpoint(js_app: JsApp) -> None:
    js_app.brick("t1")
    before = stored_rows(js_app.target)
    head_id, head, head_meta = before.head("t1")
    run_id = repair(js_app.target)["run_id"]
    after = stored_rows(js_app.target)
    [(repair_id, checkpoint, metadata)] = after.repairs("t1")
    assert set(checkpoint) == set(head) == JS_CHECKPOINT_KEYS | values_inline(js_app)
    assert checkpoint["v"] == head["v"] and checkpoint["id"] == repair_id > head_id
    assert checkpoint["ts"].endswith("Z") and len(checkpoint["ts"]) == len(head["ts"])
    assert checkpoint["versions_seen"] == head["versions_seen"]
    versions = checkpoint["channel_versions"]
    assert versions == {
        **head["channel_versions"],
        "messages": max(head["channel_versions"].values()) + 1,
    }
    assert metadata["source"] == "update" and metadata["step"] == head_meta["step"] + 1
    assert metadata["parents"] == {} and metadata["langgraph_repair_run"] == run_id
    stored = stored_messages(js_app, after, checkpoint)
    assert {tuple(m["id"]) for m in stored} == {
        ("langchain_core", "messages", "HumanMessage"),
        ("langchain_core", "messages", "AIMessage"),
        ("langchain_core", "messages", "ToolMessage"),
    }
    synthetic = stored[2]["kwargs"]
    assert synthetic["tool_call_id"] == "call_0" and synthetic["status"] == "error"
    assert "type" not in synthetic
    [new] = [blob for blob in after.blobs if blob not in before.blobs]  # one, all others kept
    assert sorted([*before.blobs, new]) == after.blobs
    where = (
        ("(checkpoint)", repair_id) if js_app.on_sqlite else ("messages", str(versions["messages"]))
    )
    assert new[1:3] == where
    assert_js_format_only(after)


def test_the_repair_and_its_undo_keep_the_threads_metadata(js_app: JsApp) -> None:
    js_app.brick("t1")
    tag_head(js_app.target, "t1", SERVER | APP)
    run_id = repair(js_app.target)["run_id"]
    [(_, _, metadata)] = stored_rows(js_app.target).repairs("t1")
    assert (SERVER | APP).items() <= metadata.items()
    assert metadata["source"] == "update" and metadata["langgraph_repair_run"] == run_id
    undone = run_cli("undo", js_app.target, "--run", run_id, "--json")
    assert last_json(undone.stdout)["threads_restored"] == 1, undone.stderr
    _, _, restored = stored_rows(js_app.target).head("t1")
    assert (SERVER | APP).items() <= restored.items() and restored["source"] == "update"
    assert js_app.state("t1")["ok"]  # the application reads the thread it tagged


def values_inline(js_app: JsApp) -> set[str]:
    """LangGraph.js's SQLite saver keeps the values in the checkpoint's row."""
    return {"channel_values"} if js_app.on_sqlite else set()


def stored_messages(js_app: JsApp, rows: StoredRows, checkpoint: dict[str, Any]) -> Any:
    """The repaired messages as stored: in the row on SQLite, in a blob on PostgreSQL."""
    if js_app.on_sqlite:
        return checkpoint["channel_values"]["messages"]
    type_, blob = rows.blob("t1", "messages", checkpoint["channel_versions"]["messages"])
    assert type_ == "json" and blob is not None
    return json.loads(blob)


def test_undo_brings_the_brick_back_exactly(js_app: JsApp) -> None:
    js_app.brick("t1")
    bricked = js_app.state("t1")
    run_id = repair(js_app.target)["run_id"]
    assert js_app.state("t1")["messages"] != bricked["messages"]
    done = run_cli("undo", js_app.target, "--run", run_id, "--json")
    assert done.returncode == 0, done.stderr
    assert last_json(done.stdout)["threads_restored"] == 1
    assert js_app.state("t1")["messages"] == bricked["messages"]
    failed = js_app.turn("t1", "hello?")
    assert not failed["ok"] and "Missing: call_0" in failed["error"]
    assert_js_format_only(stored_rows(js_app.target))
