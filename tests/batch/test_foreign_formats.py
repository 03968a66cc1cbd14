"""The command writes only the formats a thread's own rows already use. Each foreign
format we can make is planted beside a plain broken thread: the plain one is repaired,
the planted one is reported (`foreign_format`, with why) by `scan`, `--list`, `show`
and `repair`, and not one of its rows changes."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
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
from langgraph_checkpoint_repair.decisions.formats import (
    RowFormat,
    foreign_format,
    version_scheme,
)
from langgraph_checkpoint_repair.js.values import dumps_js
from langgraph_checkpoint_repair.stores.sqlite.js_saver import JsSqliteSaver
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


@dataclass(frozen=True)
class PythonStore:
    """A store LangGraph's own saver writes, on SQLite or PostgreSQL, and its rows."""

    target: str
    on_sqlite: bool

    @property
    def path(self) -> str:
        return self.target.removeprefix("sqlite:///")

    def saver(self) -> Any:
        if self.on_sqlite:
            return SqliteSaver.from_conn_string(self.path)
        return PostgresSaver.from_conn_string(self.target)

    def execute(self, statement: str, *params: Any) -> None:
        """A statement on the store, `?` for each parameter whatever the store."""
        if self.on_sqlite:
            with contextlib.closing(sqlite3.connect(self.path)) as lite, lite:
                lite.execute(statement, params)
        else:
            with psycopg.connect(self.target) as conn:
                conn.execute(statement.replace("?", "%s"), params)

    def thread_rows(self, thread_id: str) -> list[Any]:
        """Every row of the thread, in every table."""
        tables = ["checkpoints", "writes"] if self.on_sqlite else POSTGRES_TABLES
        rows: list[Any] = []
        for table in tables:
            query = f"SELECT * FROM {table} WHERE thread_id = ? ORDER BY 1, 2, 3"
            if self.on_sqlite:
                with contextlib.closing(sqlite3.connect(self.path)) as conn:
                    rows.append(conn.execute(query, (thread_id,)).fetchall())
            else:
                with psycopg.connect(self.target) as conn:
                    rows.append(conn.execute(query.replace("?", "%s"), (thread_id,)).fetchall())
        return rows


POSTGRES_TABLES = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]


@pytest.fixture(params=["sqlite", "postgres"])
def python_store(request: pytest.FixtureRequest, tmp_path: Path) -> PythonStore:
    if request.param == "sqlite":
        return PythonStore(f"sqlite:///{tmp_path / 'threads.sqlite'}", on_sqlite=True)
    return PythonStore(request.getfixturevalue("pg_uri"), on_sqlite=False)


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


def test_a_json_typed_thread_on_a_python_store_is_left_alone(python_store: PythonStore) -> None:
    """The planted thread's messages stored as `json` (a SQLite row, a PostgreSQL blob),
    its versions still LangGraph's strings."""
    with python_store.saver() as saver:
        saver.setup()
        put_broken(saver, "plain")
        planted = put_broken(saver, "planted")
    if python_store.on_sqlite:
        stored = {k: v for k, v in planted.items() if k != "updated_channels"}
        python_store.execute(
            "UPDATE checkpoints SET type = 'json', checkpoint = ? WHERE thread_id = 'planted'",
            dumps_js(stored),
        )
    else:
        python_store.execute(
            "UPDATE checkpoint_blobs SET type = 'json', blob = ? WHERE thread_id = 'planted'",
            dumps_js(SUBGRAPH_HISTORY),
        )
    before = python_store.thread_rows("planted")
    assert_reported_and_left_alone(python_store.target, "its rows hold 'json'")
    assert python_store.thread_rows("planted") == before


def test_an_unknown_type_name_in_a_thread_is_left_alone(python_store: PythonStore) -> None:
    with python_store.saver() as saver:
        saver.setup()
        put_broken(saver, "plain")
        first = saver.put(config("planted"), empty_checkpoint(), {"step": 0}, {})
        saver.put_writes(first, [("notes", "x")], "task-1")
        put_broken(saver, "planted")
    writes = "writes" if python_store.on_sqlite else "checkpoint_writes"
    # an older checkpoint's write: the head still loads
    python_store.execute(f"UPDATE {writes} SET type = 'bson' WHERE thread_id = 'planted'")
    before = python_store.thread_rows("planted")
    assert_reported_and_left_alone(python_store.target, "type 'bson', unknown here")
    assert python_store.thread_rows("planted") == before


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
    store = PythonStore(f"sqlite:///{path}", on_sqlite=True)
    before = store.thread_rows("planted")
    assert_reported_and_left_alone(PLAIN_SQLITE, "integers", **{SQLITE_ENV: str(path)})
    assert store.thread_rows("planted") == before


def test_undo_through_a_saver_of_another_format_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        JsSqliteSaver(conn).setup()
        put_broken(JsSqliteSaver(conn), "planted", versions=1)
    with open_saver(f"sqlite:///{path}") as saver:
        run_id = repair_threads(saver, min_idle=timedelta(0)).run_id
    store = PythonStore(f"sqlite:///{path}", on_sqlite=True)
    before = store.thread_rows("planted")
    done = run_cli("undo", PLAIN_SQLITE, "--run", run_id, "--json", **{SQLITE_ENV: str(path)})
    report = last_json(done.stdout)
    assert done.returncode == 1 and "1 thread(s) not restored: 1 foreign_format" in done.stderr
    assert report["threads_restored"] == 0 and report["threads_skipped"] == 1
    [skipped] = report["skipped"]
    assert skipped["reason"] == "foreign_format" and "integers" in skipped["detail"]
    assert store.thread_rows("planted") == before


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
        (rows("string", "json"), rows("string", "msgpack"), "write 'msgpack'"),
        (rows("string", "json", "msgpack"), rows("string", "msgpack"), None),
        (rows("string", "bson", "msgpack"), rows("string", "msgpack"), "'bson', unknown"),
        (rows("string", "msgpack+aes"), rows("string", "msgpack"), "write 'msgpack'"),
        (rows("string", "msgpack+aes", "null+aes"), rows("string", "msgpack+aes"), None),
        (rows("string", "msgpack", "msgpack+aes"), rows("string", "msgpack+aes"), None),
    ],
)
def test_the_rule(stored: RowFormat, written: RowFormat, why: str | None) -> None:
    reason = foreign_format(stored, written)
    assert (reason is None) == (why is None) and (why is None or why in str(reason))


def test_version_schemes() -> None:
    assert version_scheme([1, 7]) == "integer" and version_scheme(["00.1"]) == "string"
    assert version_scheme([1, "2"]) == "mixed" and version_scheme([]) is None
    assert version_scheme([True]) == "string"  # a flag is no LangGraph.js version
