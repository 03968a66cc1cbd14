"""One store, several graphs: the Agent Server tags each checkpoint with its graph's
`graph_id`. With `--graph-id` (or `--graph langgraph.json:ID`, which implies it), only
threads naming that graph, or none, are checked and re-targeted; another graph's threads
are counted `skipped: other_graph` and never written. The mistakes are one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_checkpoint_repair.decisions.plan import RUN_KEY
from tests.support.cli_runs import last_json, run_cli, sqlite_rows
from tests.support.release_graphs import compiled
from tests.support.stores import cli_store

GRAPH = "tests/support/release_graphs.py:release_2_asking"
OLDER = "tests/support/release_graphs.py:release_1_asking"


def tagged(thread_id: str, graph_id: str | None) -> Any:
    """A config as the Agent Server gives its runs (its configurable keys reach the
    checkpoint's metadata)."""
    configurable = {"thread_id": thread_id, **({"graph_id": graph_id} if graph_id else {})}
    return {"configurable": configurable}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_another_graphs_threads_are_neither_flagged_nor_written(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        old = compiled("interrupt", 1, store.saver)
        for thread_id, graph_id in (("mine", "agent"), ("theirs", "other"), ("untagged", None)):
            await store.invoke(old, {"topic": "x"}, tagged(thread_id, graph_id))
        theirs = await store.get_state(old, tagged("theirs", None))

        only = ("--graph", GRAPH, "--graph-id", "agent", "--min-idle", "0", "--json")
        gate = run_cli("scan", target, *only)
        assert gate.returncode == 1, gate.stderr
        found = last_json(gate.stdout)
        assert (found["findings"], found["skipped"]) == ({"node_missing": 2}, {"other_graph": 1})

        repair = run_cli("repair", target, *only, "--node-renamed", "ask=ask2")
        assert repair.returncode == 0, repair.stderr
        assert last_json(repair.stdout)["actions"] == {"node_renamed": 2}
        after = await store.get_state(old, tagged("theirs", None))
        assert after.config == theirs.config  # its head is the same checkpoint
        everyone = run_cli("scan", target, "--graph", GRAPH, "--min-idle", "0", "--json")
        assert last_json(everyone.stdout)["findings"] == {"node_missing": 1}  # theirs

        mine = await store.get_tuple(store.saver, tagged("mine", None))
        assert mine is not None and RUN_KEY in mine.metadata  # the re-targeting's checkpoint
        assert dict(mine.metadata)["graph_id"] == "agent"  # still says whose thread it is
        # the other graph still runs the release before the rename: its gate checks theirs
        # and the untagged thread (re-targeted), and knows mine is agent's, not its own
        older = ("--graph", OLDER, "--graph-id", "other", "--min-idle", "0", "--json")
        gated = last_json(run_cli("scan", target, *older).stdout)
        assert (gated["findings"], gated["skipped"]) == ({"node_missing": 1}, {"other_graph": 1})


def _config(folder: Path) -> Path:
    path = folder / "langgraph.json"
    graphs = {"agent": str(Path(GRAPH.split(":")[0]).resolve()) + ":release_2_asking"}
    path.write_text(json.dumps({"graphs": graphs}))
    return path


async def test_a_langgraph_json_graph_id_keeps_to_its_threads(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.stores import Store

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        old = compiled("interrupt", 1, saver)
        for thread_id, graph_id in (("mine", "agent"), ("theirs", "other")):
            await Store(saver, False).invoke(old, {"topic": "x"}, tagged(thread_id, graph_id))
    spec = f"{_config(tmp_path)}:agent"
    gate = run_cli("scan", f"sqlite:///{path}", "--graph", spec, "--min-idle", "0", "--json")
    assert gate.returncode == 1, gate.stderr
    found = last_json(gate.stdout)
    assert (found["findings"], found["skipped"]) == ({"node_missing": 1}, {"other_graph": 1})


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--graph", "JSON:agent", "--graph-id", "other"], "names another graph than --graph"),
        (["--graph-id", "agent"], "--graph-id needs --graph"),
        (["--graph", GRAPH, "--graph-id", " "], "--graph-id: give the graph's id"),
    ],
)
async def test_graph_id_mistakes_are_one_line_and_write_nothing(
    argv: list[str], said: str, tmp_path: Path
) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.stores import Store

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        await Store(saver, False).invoke(
            compiled("interrupt", 1, saver), {"topic": "x"}, tagged("t", "agent")
        )
    argv = [a.replace("JSON", str(_config(tmp_path))) for a in argv]
    before = sqlite_rows(path)
    renamed = ["--node-renamed", "ask=ask2"] if "--graph" in argv else []
    done = run_cli("repair", f"sqlite:///{path}", *argv, *renamed)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr and sqlite_rows(path) == before
