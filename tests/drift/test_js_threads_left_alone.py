"""LangGraph.js threads run a JavaScript graph, which a Python process cannot load:
`--graph` leaves them unchecked and unwritten, and says so."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_runs import last_json, run_cli, sqlite_rows
from tests.support.js_rows import langgraph_js_sqlite_store, langgraph_js_store

GRAPH = "tests.support.release_graphs:release_2_asking"
"""A Python graph without the JS threads' `agent` node: a Python thread would be flagged."""


def test_js_threads_on_postgres_are_not_checked(pg_uri: str) -> None:
    langgraph_js_store(pg_uri, ["js-1", "js-2"])
    done = run_cli("scan", pg_uri, "--graph", GRAPH, "--min-idle", "0", "--json")
    assert done.returncode == 0, done.stderr
    assert "node_missing" not in last_json(done.stdout).get("findings", {})
    assert done.stderr.count("LangGraph.js threads are not checked against --graph") == 1


def test_js_threads_in_a_sqlite_file_are_not_checked_nor_written(tmp_path: Path) -> None:
    path = tmp_path / "js.sqlite"
    langgraph_js_sqlite_store(path, ["js-1"])
    before = sqlite_rows(path)
    done = run_cli(
        "repair", f"sqlite:///{path}", "--graph", GRAPH, "--node-renamed", "agent=ask2",
        "--min-idle", "0", "--json", "--channel", "none",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert "findings" not in report and report["checkpoints_written"] == 0
    assert "not checked against --graph" in done.stderr and sqlite_rows(path) == before
