"""Moving a paused thread's work (`repair --graph --node-renamed`) puts its pending
writes again under new task ids: the run asks for INSERT on the writes before it
writes, and so does the undo of such a run; real roles, real grants."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver

from tests.support.cli_runs import last_json, postgres_rows, run_cli
from tests.support.release_graphs import compiled
from tests.support.roles import WRITE_GRANTS, MakeRole, migrated, one_line_error

GRAPH = "tests.support.release_graphs:release_2_asking"
MOVE = ("--graph", GRAPH, "--node-renamed", "ask=ask2", "--min-idle", "0", "--json")
WITHOUT_INSERT = [grant.replace("INSERT, DELETE", "DELETE") for grant in WRITE_GRANTS]


def _paused_store(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        config: Any = {"configurable": {"thread_id": "paused"}}
        compiled("interrupt", 1, saver).invoke({"topic": "x"}, config)
    migrated(pg_uri)


def test_moving_work_needs_insert_on_the_writes(pg_uri: str, make_role: MakeRole) -> None:
    _paused_store(pg_uri)
    before = postgres_rows(pg_uri)
    refused = run_cli("repair", make_role(WITHOUT_INSERT), *MOVE)
    line = one_line_error(refused)
    assert "INSERT" in line and "checkpoint_writes" in line and "GRANT" in line
    assert postgres_rows(pg_uri) == before
    # The same role repairs without a graph: nothing of a paused thread's work moves.
    assert run_cli("repair", make_role(WITHOUT_INSERT), "--min-idle", "0").returncode == 0

    done = run_cli("repair", make_role(WRITE_GRANTS), *MOVE)
    assert last_json(done.stdout)["actions"] == {"node_renamed": 1}, done.stderr
    run_id = last_json(done.stdout)["run_id"]
    moved = postgres_rows(pg_uri)
    undo = run_cli("undo", make_role(WITHOUT_INSERT), "--run", run_id)
    assert "INSERT" in one_line_error(undo) and postgres_rows(pg_uri) == moved
    restored = run_cli("undo", make_role(WRITE_GRANTS), "--run", run_id, "--json")
    assert last_json(restored.stdout)["threads_restored"] == 1, restored.stderr
