"""The gate before a deploy never passes on a head it did not check. A head holding a
type strict loading refuses (the application's own model) is still checked: the graph
check reads versions and pending writes, never the refused value. A head whose bytes do
not decode is counted `drift_unchecked`, named with what would let the run look, and
closes the gate as a stranded thread does. A waiting list is never whole by silence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from tests.support.cli_runs import last_json, run_cli
from tests.support.custom_state import Plan
from tests.support.integrity_threads import truncate_postgres_head, truncate_sqlite_head
from tests.support.release_graphs import compiled
from tests.support.stores import cli_store

GRAPH = "tests/support/release_graphs.py:release_2_asking"
TRUSTED = "tests.support.custom_state:Plan"


def config(thread_id: str) -> dict[str, dict[str, str]]:
    return {"configurable": {"thread_id": thread_id}}


def gate(target: str, *more: str) -> tuple[int, dict[str, Any], str]:
    done = run_cli("scan", target, "--graph", GRAPH, "--min-idle", "0", "--json", *more)
    return done.returncode, last_json(done.stdout), done.stderr


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_head_holding_a_refused_type_is_still_checked(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        paused = compiled("interrupt", 1, store.saver)
        await store.invoke(paused, {"topic": Plan(steps=["draft"])}, config("own-types"))
        code, found, stderr = gate(target)
        assert code == 1, stderr
        assert found["findings"] == {"node_missing": 1}
        assert found["skipped"] == {"refused_type": 1}  # checked, and never written on
        assert (
            "langgraph-repair: the graph's gate is closed: 1 thread(s) would be stranded: "
            "their next work names a node the graph lacks"
        ) in stderr.splitlines()
        assert found["refused_types"] == [TRUSTED.replace(":", ".")]
        code, trusted, stderr = gate(target, "--allow-type", TRUSTED)
        assert (code, trusted["findings"], trusted["skipped"]) == (1, {"node_missing": 1}, {})


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_head_that_does_not_decode_closes_the_gate(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        old = compiled("interrupt", 1, store.saver)
        await store.invoke(old, {"topic": "x"}, config("finished"))
        await store.invoke(old, Command(resume="yes"), config("finished"))
        code, clean, stderr = gate(target)
        assert (code, clean.get("findings")) == (0, None), stderr

        topic = ["a topic long enough to cut"]  # a list: PostgreSQL keeps it as a blob
        await store.invoke(old, {"topic": topic}, config("cut"))
        if kind == "postgres":
            truncate_postgres_head(target, "cut", "topic")
        else:
            truncate_sqlite_head(request.getfixturevalue("tmp_path") / "threads.sqlite", "cut")
        code, found, stderr = gate(target)
        assert code == 1, stderr
        assert found["findings"] == {"undecodable": 1, "drift_unchecked": 1}
        (entry,) = [t for t in found["threads"] if t["thread_id"] == "cut"]
        (unchecked,) = [f for f in entry["findings"] if f["code"] == "drift_unchecked"]
        assert "--rewind-unreadable" in unchecked["error"]
        assert "1 thread(s) could not be checked: their bytes do not decode" in stderr
        assert run_cli("scan", target, "--min-idle", "0").returncode == 0  # no gate asked


async def test_a_waiting_list_says_which_heads_it_could_not_check(tmp_path: Path) -> None:
    """SQLite tells a waiting head by loading it: one that does not decode may be
    waiting too, so `scan --waiting` counts it, names it, and exits 1."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.stores import Store

    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        old = compiled("interrupt", 1, saver)
        for thread_id in ("asked", "cut"):
            await Store(saver, False).invoke(old, {"topic": "x"}, config(thread_id))
    target = f"sqlite:///{path}"
    listing = ("scan", target, "--waiting", "--min-idle", "0", "--json")
    whole = run_cli(*listing)
    assert whole.returncode == 0, whole.stderr
    assert last_json(whole.stdout)["waiting_heads"] == 2
    truncate_sqlite_head(path, "cut")
    partial = run_cli(*listing)
    assert partial.returncode == 1, partial.stderr
    found = last_json(partial.stdout)
    assert (found["waiting_heads"], found["waiting_unchecked"]) == (1, 1)
    assert "1 thread(s) could not be checked for an open question" in partial.stderr
