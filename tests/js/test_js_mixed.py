"""LangGraph.js and LangGraph share one set of tables. On PostgreSQL the two savers'
migrations coexist (both number theirs in `checkpoint_migrations`; LangGraph's later
ones add indexes and `task_path`, which LangGraph.js neither needs nor touches); on
SQLite both create the same two tables, and LangGraph adds `task_path` to LangGraph.js's.
A run repairs each thread in its own format: the JavaScript application resumes its
thread, the Python graph its own."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.batch_runs import head_messages
from tests.support.cli_runs import last_json, run_cli
from tests.support.js_app import JsApp, stored_rows
from tests.support.oracle import assert_valid
from tests.support.seeding import brick
from tests.support.stores import Store


@pytest.mark.parametrize("first", ["langgraph-js", "langgraph"])
async def test_one_run_repairs_each_thread_in_its_own_format(first: str, js_app: JsApp) -> None:
    with python_saver(js_app) as saver:
        if first == "langgraph":
            saver.setup()
        js_app.brick("js-thread")
        saver.setup()  # on LangGraph.js's tables, or a no-op
        await brick(Store(saver, is_async=False), "py-thread")
        assert not js_app.turn("js-thread", "hello?")["ok"]
        done = run_cli("repair", js_app.target, "--min-idle", "0", "--json")
        assert done.returncode == 0, done.stderr
        report = last_json(done.stdout)
        assert report["threads_repaired"] == 2 and report["errors"] == []
        assert_valid(await head_messages(Store(saver, is_async=False), "py-thread"))
        py_head = saver.get_tuple({"configurable": {"thread_id": "py-thread"}})
    assert js_app.turn("js-thread", "hello again")["ok"]
    rows = stored_rows(js_app.target)
    assert types_of(rows.blobs, "js-thread") <= {"json", "empty"}
    assert types_of(rows.blobs, "py-thread") <= {"msgpack", "empty"}
    _, js_head, _ = rows.head("js-thread")
    assert all(type(v) is int for v in js_head["channel_versions"].values())
    assert py_head is not None and "langgraph_repair_run" in py_head.metadata
    assert all(type(v) is str for v in py_head.checkpoint["channel_versions"].values())


def python_saver(js_app: JsApp) -> Any:
    """LangGraph's own saver on the application's store."""
    if js_app.on_sqlite:
        return SqliteSaver.from_conn_string(js_app.target.removeprefix("sqlite:///"))
    return PostgresSaver.from_conn_string(js_app.target)


def types_of(blobs: list[Any], thread_id: str) -> set[str]:
    return {b[3] for b in blobs if b[0] == thread_id}
