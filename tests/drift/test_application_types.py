"""A real application's own types with `--graph`: the classes its state declares load as
in the application (the run names them), so the gate checks every head without
`--allow-type`, and `undo --graph` restores what `repair --graph` re-targeted. An undo
that cannot restore a thread exits 1 and says what would let it. A src layout without
`__init__.py` files, async nodes, two graphs in one store, on SQLite and PostgreSQL
(their async savers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from tests.support.asking_graphs import ASYNC_INTERRUPT
from tests.support.cli_runs import last_json, run_cli, sqlite_rows
from tests.support.src_layout_app import KEY, SECRET, App, write_app
from tests.support.stores import open_store

KINDS = ["aiosqlite", "apostgres"] if ASYNC_INTERRUPT else ["sqlite", "postgres"]
"""Async nodes on the async savers; on Python 3.10, where LangGraph cannot run
`interrupt()` in a node driven by `ainvoke`, sync nodes on the sync savers."""


@pytest.fixture
def app(tmp_path: Path) -> Any:
    written = write_app(tmp_path / "research", asynchronous=ASYNC_INTERRUPT)
    yield written
    written.forget()


@pytest.mark.parametrize("kind", KINDS)
async def test_gate_repair_and_undo_with_the_applications_types(
    kind: str, app: App, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    graph = f"{app.config}:agent"
    async with open_store(kind, tmp_path, request) as store:
        target = cli_target(kind, tmp_path, request)
        old = app.release(1).graph.copy(update={"checkpointer": store.saver})
        await store.invoke(old, {"topic": "tides"}, tagged("paused", "agent"))
        await store.invoke(old, {"topic": "winds"}, tagged("theirs", "other"))
        theirs = await store.get_tuple(store.saver, tagged("theirs", "other"))

        gate = run_cli("scan", target, "--graph", graph, "--min-idle", "0", "--json")
        assert gate.returncode == 1, gate.stderr
        found = last_json(gate.stdout)
        assert (found["findings"], found["skipped"]) == ({"node_missing": 1}, {"other_graph": 1})
        assert found["threads_needing_repair"] == 1  # stranded: a rename repairs it
        assert "no scanned thread has a channel named" not in gate.stderr  # not asked
        trusted = f"{app.package}.agent.state:Plan, {app.package}.agent.state:Section"
        assert f"trusted, as the graph's state declares them: {trusted}" in gate.stderr

        table = run_cli("scan", target, "--graph", graph, "--min-idle", "0")
        summary = table.stdout[table.stdout.index("scan") :].splitlines()
        assert "graph check" in summary[1] and "would be stranded" in summary[1], table.stdout

        renamed = ("--graph", graph, "--node-renamed", "approve=review", "--min-idle", "0")
        dry = run_cli("repair", target, *renamed, "--dry-run")
        assert "node_renamed:approve -> review" in " ".join(dry.stdout.split()), dry.stdout
        repair = run_cli("repair", target, *renamed, "--json")
        assert repair.returncode == 0, repair.stderr
        run_id = last_json(repair.stdout)["run_id"]
        assert last_json(repair.stdout)["actions"] == {"node_renamed": 1}
        new = app.release(2).graph.copy(update={"checkpointer": store.saver})
        waiting = await store.get_state(new, tagged("paused", "agent"))
        assert waiting.next == ("review",)
        assert [i.value for i in waiting.interrupts] == [{"approve": ["tides"]}]
        assert await store.get_tuple(store.saver, tagged("theirs", "other")) == theirs

        blind = run_cli("undo", target, "--run", run_id, "--json")
        assert blind.returncode == 1
        assert last_json(blind.stdout)["threads_restored"] == 0
        assert "1 thread(s) not restored: 1 refused_type" in blind.stderr
        assert "--graph SPEC" in blind.stderr

        undo = run_cli("undo", target, "--run", run_id, "--graph", graph, "--json")
        assert undo.returncode == 0, undo.stderr
        assert last_json(undo.stdout)["threads_restored"] == 1
        done = await store.invoke(old, Command(resume="approved"), tagged("paused", "agent"))
        assert done["report"] == "approved: tides"


def tagged(thread_id: str, graph_id: str) -> Any:
    """A config as the Agent Server gives its runs: the graph's id reaches the metadata."""
    return {"configurable": {"thread_id": thread_id, "graph_id": graph_id}}


def cli_target(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The TARGET the command is given for `open_store(kind, ...)`'s store."""
    if kind in ("sqlite", "aiosqlite"):
        return f"sqlite:///{tmp_path / 'threads.sqlite'}"
    return str(request.getfixturevalue("pg_uri"))


def test_imports_as_the_agent_server_does_them(app: App, tmp_path: Path) -> None:
    """`env` is loaded before the import (never echoed); `file.py:attr` finds the
    project's packages from its `langgraph.json` folder, and a key it reads at import
    that is not set is named, pointing at `env`."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()
    target = f"sqlite:///{path}"
    by_config = run_cli("scan", target, "--graph", f"{app.config}:agent")
    assert by_config.returncode == 0, by_config.stderr
    file_spec = f"{app.folder}/{app.package}/agent/release_2.py:graph"
    by_file = run_cli("scan", target, "--graph", file_spec, **{KEY: SECRET})
    assert by_file.returncode == 0, by_file.stderr
    missing = run_cli("scan", target, "--graph", file_spec)
    assert missing.returncode == 2
    assert f"the environment variable {KEY!r} is not set" in missing.stderr
    assert "langgraph.json's env" in missing.stderr
    for done in (by_config, by_file, missing):
        assert SECRET not in done.stdout + done.stderr


def test_a_missing_env_file_is_one_line_and_writes_nothing(app: App, tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    (app.folder / ".env").unlink()
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()
    before = sqlite_rows(path)
    graph = f"{app.config}:agent"
    done = run_cli("repair", f"sqlite:///{path}", "--graph", graph, "--min-idle", "0")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("langgraph-repair: error: --graph: no env file ") and ".env" in line
    assert sqlite_rows(path) == before
