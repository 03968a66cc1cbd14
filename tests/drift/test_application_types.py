"""A real application's own types with `--graph`: the classes its state declares load as
in the application (the run names them), so the gate checks every head without
`--allow-type`, and `undo --graph` restores what `repair --graph` re-targeted. An undo
that cannot restore a thread exits 1 and says what would let it. A src layout without
`__init__.py` files, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from tests.support.cli_runs import last_json, run_cli
from tests.support.src_layout_app import App, write_app
from tests.support.stores import cli_store

THREAD: Any = {"configurable": {"thread_id": "paused"}}


@pytest.fixture
def app(tmp_path: Path) -> Any:
    written = write_app(tmp_path / "research")
    yield written
    written.forget()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_gate_repair_and_undo_with_the_applications_types(
    kind: str, app: App, request: pytest.FixtureRequest
) -> None:
    graph = f"{app.config}:agent"
    with cli_store(kind, request) as (target, store):
        old = app.release(1).graph.copy(update={"checkpointer": store.saver})
        await store.invoke(old, {"topic": "tides"}, THREAD)

        gate = run_cli("scan", target, "--graph", graph, "--min-idle", "0", "--json")
        assert gate.returncode == 1, gate.stderr
        found = last_json(gate.stdout)
        assert (found["findings"], found["skipped"]) == ({"node_missing": 1}, {})
        trusted = f"{app.package}.agent.state:Plan, {app.package}.agent.state:Section"
        assert f"trusted, as the graph's state declares them: {trusted}" in gate.stderr

        renamed = ("--graph", graph, "--node-renamed", "approve=review", "--min-idle", "0")
        repair = run_cli("repair", target, *renamed, "--json")
        assert repair.returncode == 0, repair.stderr
        run_id = last_json(repair.stdout)["run_id"]
        assert last_json(repair.stdout)["actions"] == {"node_renamed": 1}

        blind = run_cli("undo", target, "--run", run_id, "--json")
        assert blind.returncode == 1
        assert last_json(blind.stdout)["threads_restored"] == 0
        assert "1 thread(s) not restored: 1 refused_type" in blind.stderr
        assert "--graph SPEC" in blind.stderr

        undo = run_cli("undo", target, "--run", run_id, "--graph", graph, "--json")
        assert undo.returncode == 0, undo.stderr
        assert last_json(undo.stdout)["threads_restored"] == 1
        done = await store.invoke(old, Command(resume="approved"), THREAD)
        assert done["report"] == "approved: tides"
