"""The command drives a saver that implements only the async API (or whose sync
methods raise NotImplementedError) through the async batch functions, whatever form
its factory takes (plain, `async def`, async context manager), with no "coroutine
was never awaited" warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.cli_runs import last_json, repairs_per_thread_sqlite, run_cli
from tests.support.factories import SQLITE_ENV
from tests.support.seeding import brick
from tests.support.stores import Store

THREADS = ["bricked-0", "bricked-1"]


async def seed(path: Path) -> None:
    with SqliteSaver.from_conn_string(str(path)) as saver:
        for thread_id in THREADS:
            await brick(Store(saver, is_async=False), thread_id)


@pytest.mark.parametrize(
    "factory",
    [
        "async_only_saver",
        "sync_refusing_saver",
        "async_def_factory",
        "async_context_factory",
        "sqlite_saver",
    ],
)
async def test_scan_repair_and_undo_through_any_factory(factory: str, tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    await seed(path)
    target, env = f"tests.support.factories:{factory}", {SQLITE_ENV: str(path)}

    scan = run_cli("scan", target, "--min-idle", "0", "--json", **env)
    assert (scan.returncode, scan.stderr) == (0, "")
    scanned = last_json(scan.stdout)
    assert scanned["threads_needing_repair"] == len(THREADS)
    assert sorted(thread["thread_id"] for thread in scanned["threads"]) == THREADS
    listed = run_cli("scan", target, "--min-idle", "0", "--list", **env)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert sorted(line.split("\t")[0] for line in listed.stdout.splitlines()) == THREADS

    repair = run_cli("repair", target, "--min-idle", "0", "--json", **env)
    assert (repair.returncode, repair.stderr) == (0, "")
    report = last_json(repair.stdout)
    assert report["threads_repaired"] == len(THREADS)
    assert repairs_per_thread_sqlite(path) == dict.fromkeys(THREADS, 1)

    undo = run_cli("undo", target, "--run", report["run_id"], "--json", **env)
    assert (undo.returncode, undo.stderr) == (0, "")
    assert last_json(undo.stdout)["threads_restored"] == len(THREADS)
    again = run_cli("scan", target, "--min-idle", "0", "--json", **env)
    assert last_json(again.stdout)["threads_needing_repair"] == len(THREADS)
