"""SIGINT and SIGTERM stop a slow run at once, print the summary so far, exit 130 / 143,
and the next run finishes the work: real signals to a real child process, on a real
SQLite file, a real PostgreSQL store, and an async-only saver."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.cli_runs import (
    last_json,
    repairs_per_thread_postgres,
    repairs_per_thread_sqlite,
    run_cli,
    start_cli,
    wait_for_first_repair,
)
from tests.support.factories import SQLITE_ENV
from tests.support.seeding import brick
from tests.support.stores import Store

THREADS = [f"bricked-{n}" for n in range(5)]
SLOW = ("--min-idle", "0", "--concurrency", "1", "--max-writes-per-second")


async def seed_sqlite(path: Path) -> None:
    with SqliteSaver.from_conn_string(str(path)) as saver:
        for thread_id in THREADS:
            await brick(Store(saver, is_async=False), thread_id)


async def seed_postgres(uri: str) -> None:
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        for thread_id in THREADS:
            await brick(Store(saver, is_async=False), thread_id)


CASES = {
    "sqlite, SIGINT, json": ("sqlite", signal.SIGINT, "0.5", True),
    "sqlite, SIGTERM, human": ("sqlite", signal.SIGTERM, "0.5", False),
    "sqlite, SIGINT, a rate of 1e-9": ("sqlite", signal.SIGINT, "1e-9", False),
    "postgres, SIGTERM, json": ("postgres", signal.SIGTERM, "0.5", True),
    "postgres, SIGINT, human": ("postgres", signal.SIGINT, "1e-9", False),
    "async-only saver, SIGTERM, json": ("async_only", signal.SIGTERM, "1e-9", True),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_signal_stops_the_run_and_the_next_run_finishes(
    case: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kind, signum, rate, as_json = CASES[case]
    path = tmp_path / "threads.sqlite"
    if kind == "postgres":
        target = request.getfixturevalue("pg_uri")
        await seed_postgres(target)
        count: Callable[[], dict[str, int]] = lambda: repairs_per_thread_postgres(target)  # noqa: E731
    else:
        await seed_sqlite(path)
        target = (
            "tests.support.factories:async_only_saver"
            if kind == "async_only"
            else f"sqlite:///{path}"
        )
        count = lambda: repairs_per_thread_sqlite(path)  # noqa: E731
    env = {SQLITE_ENV: str(path)}
    json_flag = ["--json"] if as_json else []
    process = start_cli("repair", target, *SLOW, rate, *json_flag, **env)
    wait_for_first_repair(count)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)

    assert process.returncode == 128 + signum, stderr
    assert f"stopped by {signum.name}" in stderr
    assert "Traceback" not in stderr
    first = count()
    assert set(first.values()) == {1}
    assert 1 <= len(first) < len(THREADS)
    if as_json:
        summary = last_json(stdout)
        assert summary["stopped"] is True
        assert summary["threads_repaired"] == len(first)
        # the heads written and the one waiting for its turn, not the whole page
        assert len(first) <= summary["threads_scanned"] <= len(first) + 1
    else:
        assert f"threads repaired        {len(first)}" in stdout
        assert "stopped" in stdout

    finish = run_cli("repair", target, "--min-idle", "0", "--json", **env)
    assert finish.returncode == 0, finish.stderr
    assert last_json(finish.stdout)["threads_repaired"] == len(THREADS) - len(first)
    assert count() == dict.fromkeys(THREADS, 1)
