"""`undo` on a live store: two undos of one run at once, and a signal mid-undo (real
child processes on a real SQLite file and a real PostgreSQL store)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from tests.support.cli_runs import last_json, run_cli, start_cli, wait_for_first_repair
from tests.support.seeding import BROKEN_THREADS, SUBGRAPH_HISTORY, seed_broken
from tests.support.stores import cli_store

UNDOS_SQLITE = """
SELECT thread_id, count(*) FROM checkpoints
WHERE json_extract(CAST(metadata AS TEXT), '$.langgraph_repair.kind') = 'undo' GROUP BY 1"""
UNDOS_POSTGRES = """
SELECT thread_id, count(*) FROM checkpoints
WHERE metadata -> 'langgraph_repair' ->> 'kind' = 'undo' GROUP BY 1"""


def undos_per_thread(kind: str, target: str) -> dict[str, int]:
    """How many undo checkpoints each thread holds, written by any undo."""
    if kind == "sqlite":
        path = target.removeprefix("sqlite:///")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return dict(conn.execute(UNDOS_SQLITE).fetchall())
    with psycopg.connect(target) as pg:
        return dict(pg.execute(UNDOS_POSTGRES).fetchall())


def repaired_run(target: str) -> str:
    done = run_cli("repair", target, "--min-idle", "0", "--json")
    assert done.returncode == 0, done.stderr
    run_id: str = last_json(done.stdout)["run_id"]
    return run_id


def report_of(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return last_json(out)


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
async def test_two_undos_at_once_restore_each_thread_once(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        thread_ids = await seed_broken(store, BROKEN_THREADS)
        run_id = repaired_run(target)
        undos = [start_cli("undo", target, "--run", run_id, "--json") for _ in "ab"]
        reports = [report_of(undo) for undo in undos]
        assert undos_per_thread(kind, target) == dict.fromkeys(thread_ids, 1)
        for thread_id in thread_ids:
            tup = store.saver.get_tuple({"configurable": {"thread_id": thread_id}})
            assert tup is not None
            assert tup.checkpoint["channel_values"]["messages"] == SUBGRAPH_HISTORY
    assert sum(r["threads_restored"] for r in reports) == BROKEN_THREADS
    for report in reports:
        assert report["errors"] == []
        assert report["threads_restored"] + report["threads_skipped"] == BROKEN_THREADS
        assert {s["reason"] for s in report["skipped"]} <= {"claimed"}


UNDO_THREADS = 5
CASES = {
    "sqlite, SIGINT, json": ("sqlite", signal.SIGINT, True),
    "sqlite, SIGTERM, human": ("sqlite", signal.SIGTERM, False),
    "postgres, SIGTERM, json": ("postgres", signal.SIGTERM, True),
    "postgres, SIGINT, human": ("postgres", signal.SIGINT, False),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_signal_stops_an_undo_and_the_next_undo_finishes(
    case: str, request: pytest.FixtureRequest
) -> None:
    kind, signum, as_json = CASES[case]
    with cli_store(kind, request) as (target, store):
        thread_ids = await seed_broken(store, UNDO_THREADS)
    run_id = repaired_run(target)
    count: Callable[[], dict[str, int]] = lambda: undos_per_thread(kind, target)  # noqa: E731
    json_flag = ["--json"] if as_json else []
    slow = ("--max-writes-per-second", "0.5")
    process = start_cli("undo", target, "--run", run_id, *slow, *json_flag)
    wait_for_first_repair(count)  # the first undo checkpoint, here
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)

    assert process.returncode == 128 + signum, stderr
    assert f"stopped by {signum.name}" in stderr
    assert "Traceback" not in stderr
    first = count()
    assert set(first.values()) == {1}
    assert 1 <= len(first) < UNDO_THREADS
    if as_json:
        summary = last_json(stdout)
        assert summary["stopped"] is True
        assert summary["threads_restored"] == len(first)
    else:
        assert f"threads restored  {len(first)}" in stdout
        assert "stopped" in stdout

    finish = run_cli("undo", target, "--run", run_id, "--json")
    assert finish.returncode == 0, finish.stderr
    rest = last_json(finish.stdout)
    assert rest["threads_restored"] == UNDO_THREADS - len(first)
    assert "stopped" not in rest
    assert count() == dict.fromkeys(thread_ids, 1)
