"""The command writes only the formats a thread's own rows already use. Each foreign
format we can make is planted beside a plain broken thread: the plain one is repaired,
the planted one is reported (`foreign_format`, with why) by `scan`, `--list`, `show`
and `repair`, and not one of its rows changes."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.js.sqlite_saver import JsSqliteSaver
from langgraph_checkpoint_repair.js.values import dumps_js
from langgraph_checkpoint_repair.stores.formats import (
    RowFormat,
    foreign_format,
    version_scheme,
)
from langgraph_checkpoint_repair.targets import open_saver
from tests.support.cli_runs import last_json, run_cli
from tests.support.factories import SQLITE_ENV
from tests.support.seeding import SUBGRAPH_HISTORY, config

PLAIN_SQLITE = "tests.support.factories:sqlite_saver"
"""LangGraph's own SqliteSaver on the file: it writes msgpack and string versions."""


def put_broken(saver: Any, thread_id: str, versions: Any = None) -> Any:
    """A head whose call is answered by nothing, put with the saver's own `put`; with
    `versions`, counted by that scheme (integers: as LangGraph.js counts them)."""
    checkpoint = empty_checkpoint()
    version = saver.get_next_version(None, None) if versions is None else versions
    checkpoint["channel_values"] = {"messages": SUBGRAPH_HISTORY}
    checkpoint["channel_versions"] = {"messages": version}
    saver.put(config(thread_id), checkpoint, {"source": "loop", "step": 1}, {"messages": version})
    return checkpoint


def sqlite_thread_rows(path: Path, thread_id: str) -> list[Any]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT * FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (thread_id,)
        ).fetchall()
        return (
            rows + conn.execute("SELECT * FROM writes WHERE thread_id = ?", (thread_id,)).fetchall()
        )


def postgres_thread_rows(uri: str, thread_id: str) -> list[Any]:
    with psycopg.connect(uri) as conn:
        return [
            conn.execute(
                f"SELECT * FROM {table} WHERE thread_id = %s ORDER BY 1, 2, 3", (thread_id,)
            ).fetchall()
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        ]


def assert_reported_and_left_alone(target: str, why: str, **env: str) -> None:
    """`scan`, `--list`, `show` and `repair` name the planted thread and why; the plain one
    is repaired."""
    scanned = last_json(run_cli("scan", target, "--min-idle", "0", "--json", **env).stdout)
    assert scanned["skipped"] == {"foreign_format": 1} and scanned["findings"] == {
        "foreign_format": 1
    }
    [planted] = [t for t in scanned["threads"] if t["thread_id"] == "planted"]
    assert planted["outcome"] == "foreign_format"
    assert why in planted["findings"][0]["error"]
    listed = run_cli("scan", target, "--min-idle", "0", "--list", **env).stdout.splitlines()
    assert any(line.startswith("planted\t") and "foreign_format" in line for line in listed)
    shown = run_cli("show", target, "--thread", "planted", "--json", **env)
    preview = last_json(shown.stdout)
    assert preview["outcome"] == "foreign_format" and why in preview["findings"][0]["error"]
    done = run_cli("repair", target, "--min-idle", "0", "--json", **env)
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert report["threads_repaired"] == 1 and report["skipped"] == {"foreign_format": 1}
    assert "foreign_format" in done.stderr or "foreign_format" in done.stdout


def test_a_json_typed_thread_on_a_python_sqlite_store_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        put_broken(saver, "plain")
        planted = put_broken(saver, "planted")
    with sqlite3.connect(path) as conn:  # the same checkpoint, as JSON, versions still strings
        conn.execute(
            "UPDATE checkpoints SET type = 'json', checkpoint = ? WHERE thread_id = 'planted'",
            (dumps_js({k: v for k, v in planted.items() if k != "updated_channels"}),),
        )
    before = sqlite_thread_rows(path, "planted")
    assert_reported_and_left_alone(f"sqlite:///{path}", "its rows hold 'json'")
    assert sqlite_thread_rows(path, "planted") == before


def test_a_json_typed_blob_on_a_python_postgres_store_is_left_alone(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        put_broken(saver, "plain")
        put_broken(saver, "planted")
    with psycopg.connect(pg_uri) as conn:
        conn.execute(
            "UPDATE checkpoint_blobs SET type = 'json', blob = %s WHERE thread_id = 'planted'",
            (dumps_js(SUBGRAPH_HISTORY),),
        )
    before = postgres_thread_rows(pg_uri, "planted")
    assert_reported_and_left_alone(pg_uri, "its rows hold 'json'")
    assert postgres_thread_rows(pg_uri, "planted") == before


def test_an_unknown_type_name_in_a_sqlite_thread_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        put_broken(saver, "plain")
        first = saver.put(config("planted"), empty_checkpoint(), {"step": 0}, {})
        saver.put_writes(first, [("notes", "x")], "task-1")
        put_broken(saver, "planted")
    with sqlite3.connect(path) as conn:  # an older checkpoint's write: the head still loads
        conn.execute("UPDATE writes SET type = 'bson' WHERE thread_id = 'planted'")
    before = sqlite_thread_rows(path, "planted")
    assert_reported_and_left_alone(f"sqlite:///{path}", "type 'bson', unknown here")
    assert sqlite_thread_rows(path, "planted") == before


def test_an_unknown_type_name_in_a_postgres_thread_is_left_alone(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        put_broken(saver, "plain")
        first = saver.put(config("planted"), empty_checkpoint(), {"step": 0}, {})
        saver.put_writes(first, [("notes", "x")], "task-1")
        put_broken(saver, "planted")
    with psycopg.connect(pg_uri) as conn:
        conn.execute("UPDATE checkpoint_writes SET type = 'bson' WHERE thread_id = 'planted'")
    before = postgres_thread_rows(pg_uri, "planted")
    assert_reported_and_left_alone(pg_uri, "type 'bson', unknown here")
    assert postgres_thread_rows(pg_uri, "planted") == before


def test_a_langgraph_js_thread_under_langgraphs_own_sqlite_saver_is_left_alone(
    tmp_path: Path,
) -> None:
    """A factory giving LangGraph's SqliteSaver would write msgpack and string versions on
    a LangGraph.js thread: its versions are integers, so nothing is written."""
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        put_broken(saver, "plain")
    with sqlite3.connect(path, check_same_thread=False) as conn:
        put_broken(JsSqliteSaver(conn), "planted", versions=1)
    before = sqlite_thread_rows(path, "planted")
    assert_reported_and_left_alone(PLAIN_SQLITE, "integers", **{SQLITE_ENV: str(path)})
    assert sqlite_thread_rows(path, "planted") == before


def test_undo_through_a_saver_of_another_format_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        JsSqliteSaver(conn).setup()
        put_broken(JsSqliteSaver(conn), "planted", versions=1)
    with open_saver(f"sqlite:///{path}") as saver:
        run_id = repair_threads(saver, min_idle=timedelta(0)).run_id
    before = sqlite_thread_rows(path, "planted")
    done = run_cli("undo", PLAIN_SQLITE, "--run", run_id, "--json", **{SQLITE_ENV: str(path)})
    report = last_json(done.stdout)
    assert report["threads_restored"] == 0 and report["threads_skipped"] == 1
    [skipped] = report["skipped"]
    assert skipped["reason"] == "foreign_format" and "integers" in skipped["detail"]
    assert sqlite_thread_rows(path, "planted") == before


def test_a_saver_known_only_through_its_api_never_gets_another_version_scheme() -> None:
    """InMemorySaver counts versions as strings; a thread counted in integers (as
    LangGraph.js counts them) is reported and not written on."""
    saver = InMemorySaver()
    put_broken(saver, "plain")
    put_broken(saver, "planted", versions=3)
    report = repair_threads(saver, min_idle=timedelta(0))
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes == {"plain": "repaired", "planted": "foreign_format"}
    assert len(list(saver.list(config("planted")))) == 1


def rows(scheme: str | None, *types: str) -> RowFormat:
    return RowFormat(frozenset(types), scheme)  # type: ignore[arg-type]


NO_ROWS_SEEN = None


@pytest.mark.parametrize(
    ("stored", "written", "why"),
    [
        (rows("string", "msgpack", "empty"), rows("string", "msgpack"), None),
        (rows("integer", "json", "empty"), rows("integer", "json"), None),
        (RowFormat(NO_ROWS_SEEN, "string"), RowFormat(NO_ROWS_SEEN, "string"), None),
        (rows("string"), rows("string", "msgpack"), None),
        (rows("integer", "json"), rows("string", "msgpack"), "integers"),
        (RowFormat(NO_ROWS_SEEN, "integer"), RowFormat(NO_ROWS_SEEN, "string"), "integers"),
        (rows("mixed", "json"), rows("integer", "json"), "both"),
        (rows("string", "json", "msgpack"), rows("string", "msgpack"), "'json'"),
        (rows("string", "msgpack+aes"), rows("string", "msgpack"), "unknown"),
        (rows("string", "msgpack+aes"), rows("string", "msgpack+aes"), None),
    ],
)
def test_the_rule(stored: RowFormat, written: RowFormat, why: str | None) -> None:
    reason = foreign_format(stored, written)
    assert (reason is None) == (why is None) and (why is None or why in str(reason))


def test_version_schemes() -> None:
    assert version_scheme([1, 7]) == "integer" and version_scheme(["00.1"]) == "string"
    assert version_scheme([1, "2"]) == "mixed" and version_scheme([]) is None
    assert version_scheme([True]) == "string"  # a flag is no LangGraph.js version
