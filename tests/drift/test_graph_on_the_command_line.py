"""`--graph` and `--node-renamed` on the command line: the gate before a deploy, the
repair and its undo on real SQLite and PostgreSQL stores, each way of naming a graph,
and the mistakes a tired operator makes (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from tests.support.cli_runs import last_json, run_cli, sqlite_rows
from tests.support.release_graphs import QUESTION, compiled
from tests.support.stores import Store, cli_store

GRAPH = "tests/support/release_graphs.py:release_2_asking"
THREAD = {"configurable": {"thread_id": "paused"}}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_gate_the_repair_and_the_undo(kind: str, request: pytest.FixtureRequest) -> None:
    with cli_store(kind, request) as (target, store):
        await store.invoke(compiled("interrupt", 1, store.saver), {"topic": "x"}, THREAD)
        gate = run_cli("scan", target, "--graph", GRAPH, "--min-idle", "0", "--list")
        assert gate.returncode == 1, gate.stderr
        assert gate.stdout.split("\t")[-1].strip() == "node_missing"
        assert run_cli("scan", target, "--min-idle", "0", "--list").returncode == 0
        shown = run_cli("show", target, "--thread", "paused", "--graph", GRAPH, "--json")
        (finding,) = last_json(shown.stdout)["findings"]
        assert (finding["code"], finding["node"]) == ("node_missing", "ask")
        assert "ship it?" in finding["error"]

        repair = run_cli(
            "repair", target, "--graph", GRAPH, "--node-renamed", "ask=ask2",
            "--min-idle", "0", "--json",
        )  # fmt: skip
        assert repair.returncode == 0, repair.stderr
        run = last_json(repair.stdout)
        assert run["actions"] == {"node_renamed": 1}
        assert run_cli("scan", target, "--graph", GRAPH, "--min-idle", "0").returncode == 0
        new = compiled("interrupt", 2, store.saver)
        assert [i.value for i in (await store.get_state(new, THREAD)).interrupts] == [QUESTION]

        undo = run_cli("undo", target, "--run", run["run_id"], "--json")
        assert last_json(undo.stdout)["threads_restored"] == 1
        old = compiled("interrupt", 1, store.saver)
        assert (await store.invoke(old, Command(resume="yes"), THREAD))["log"] == ["after yes"]


def _langgraph_json(folder: Path) -> Path:
    """An Agent Server config whose graph file imports a sibling module."""
    (folder / "app").mkdir()
    (folder / "app" / "shapes.py").write_text("from tests.support.release_graphs import asking\n")
    (folder / "app" / "agent.py").write_text(
        "from shapes import asking\n\ndef make_graph():\n    return asking('ask2').compile()\n"
    )
    config = {"dependencies": ["./app"], "graphs": {"agent": "./app/agent.py:make_graph"}}
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize(
    "spec",
    [
        "tests/support/release_graphs.py:release_2_asking_builder",
        "tests.support.release_graphs:release_2_asking",
        "tests.support.release_graphs:release_2_asking_factory",
        "langgraph.json:agent",
    ],
)
async def test_each_way_of_naming_the_graph(spec: str, tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        await Store(saver, False).invoke(compiled("interrupt", 1, saver), {"topic": "x"}, THREAD)
    if spec.startswith("langgraph.json"):
        spec = f"{_langgraph_json(tmp_path)}:agent"
    found = run_cli("scan", f"sqlite:///{path}", "--graph", spec, "--min-idle", "0", "--json")
    assert found.returncode == 1, found.stderr
    assert last_json(found.stdout)["findings"] == {"node_missing": 1}


MISTAKES: list[tuple[list[str], str]] = [
    (["--graph", "nowhere/graph.py:graph"], "no file 'nowhere/graph.py'"),
    (["--graph", "tests.support.no_such_module:graph"], "no module 'tests.support.no_such_module'"),
    (["--graph", "tests.support.release_graphs:nothing"], "has no attribute 'nothing'"),
    (["--graph", "tests.support.release_graphs:QUESTION"], "not a StateGraph"),
    (["--graph", "langgraph.json:nope"], "no graph 'nope'"),
    (["--graph", GRAPH, "--node-renamed", "ask=nope"], "node 'nope' (renamed from 'ask')"),
    (["--graph", GRAPH, "--node-renamed", "ask"], "give OLD=NEW"),
    (["--node-renamed", "ask=ask2"], "--node-renamed needs --graph"),
    (["--graph", "tests.support.raises_on_import:graph"], "cannot import"),
]


@pytest.mark.parametrize(("argv", "said"), MISTAKES)
async def test_mistakes_are_one_line_and_write_nothing(
    argv: list[str], said: str, tmp_path: Path
) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        await Store(saver, False).invoke(compiled("interrupt", 1, saver), {"topic": "x"}, THREAD)
    (tmp_path / "langgraph.json").write_text(json.dumps({"graphs": {"agent": "./a.py:g"}}))
    argv = [a.replace("langgraph.json", str(tmp_path / "langgraph.json")) for a in argv]
    before = sqlite_rows(path)
    done: Any = run_cli("repair", f"sqlite:///{path}", *argv, "--min-idle", "0")
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr and sqlite_rows(path) == before


async def test_a_thread_in_a_foreign_format_is_reported_not_retargeted(tmp_path: Path) -> None:
    """A paused thread whose older checkpoint row holds a serializer type unknown here:
    reported `foreign_format`, every row as it was; a plain one is re-targeted."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        old = compiled("interrupt", 1, saver)
        for thread in ("plain", "planted"):
            await Store(saver, False).invoke(old, {"topic": "x"}, _config_of(thread))
        planted = saver.get_tuple(_config_of("planted"))
    assert planted is not None and planted.parent_config is not None
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE checkpoints SET type = 'bson' WHERE thread_id = 'planted' "
            "AND checkpoint_id = ?",
            (planted.parent_config["configurable"]["checkpoint_id"],),
        )
    conn.close()
    before = sqlite_rows(path)
    done = run_cli(
        "repair", f"sqlite:///{path}", "--graph", GRAPH, "--node-renamed", "ask=ask2",
        "--min-idle", "0", "--json",
    )  # fmt: skip
    report = last_json(done.stdout)
    assert report["skipped"] == {"foreign_format": 1} and report["threads_repaired"] == 1
    planted_rows = [row for row in before if row[:1] == ("planted",)]
    assert [row for row in sqlite_rows(path) if row[:1] == ("planted",)] == planted_rows


def _config_of(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}
