"""Run `langgraph-repair` as a child process and look at what it left behind."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from tests.support.report_checks import assert_consistent

REPO = Path(__file__).resolve().parents[2]
CHILD = [sys.executable, "-m", "tests.support.cli_child"]


def child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    paths = [str(REPO), *filter(None, [extra.get("PYTHONPATH"), os.environ.get("PYTHONPATH")])]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONWARNINGS"] = "default"  # a "coroutine was never awaited" must show
    return env


def run_cli(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CHILD, *argv], capture_output=True, text=True, cwd=REPO, env=child_env(**env), timeout=120
    )


def start_cli(*argv: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CHILD, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=child_env(**env),
    )


def last_json(stdout: str) -> dict[str, Any]:
    """The command's JSON object; a run's summary is checked to agree with itself."""
    parsed: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    assert_consistent(parsed)
    return parsed


def sqlite_rows(path: Path) -> list[tuple[Any, ...]]:
    """Every checkpoint and write row of a SQLite store, to prove nothing was written."""
    # Read-write (never created), and closed here: on a WAL file, a read-only connection
    # leaves the -wal/-shm files SQLite made for it behind, which the test would count.
    with contextlib.closing(
        sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True)
    ) as conn:
        checkpoints = conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints ORDER BY 1, 2, 3"
        ).fetchall()
        writes = conn.execute("SELECT count(*) FROM writes").fetchall()
    return [*checkpoints, *writes]


def postgres_rows(uri: str) -> dict[str, int]:
    """Row count of every table in the test's schema (audit tables included, if any)."""
    with psycopg.connect(uri, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() ORDER BY 1"
            ).fetchall()
        ]
        counts = {}
        for table in tables:
            row = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            counts[table] = row[0] if row else 0
    return counts


def repairs_per_thread_sqlite(path: Path) -> dict[str, int]:
    """How many repair checkpoints each thread holds, written by any run."""
    # Read-write (never created), and closed here: on a WAL file, a read-only connection
    # leaves the -wal/-shm files SQLite made for it behind, which the test would count.
    with contextlib.closing(
        sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True)
    ) as conn:
        rows = conn.execute(
            "SELECT thread_id, count(*) FROM checkpoints "
            "WHERE json_extract(CAST(metadata AS TEXT), '$.langgraph_repair_run') IS NOT NULL "
            "GROUP BY 1"
        ).fetchall()
    return dict(rows)


def repairs_per_thread_postgres(uri: str) -> dict[str, int]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT thread_id, count(*) FROM checkpoints "
            "WHERE metadata ? 'langgraph_repair_run' GROUP BY 1"
        ).fetchall()
    return dict(rows)


def wait_for_first_repair(count: Callable[[], dict[str, int]]) -> None:
    """Until the run has written one repair (the first write never waits for the rate)."""
    deadline = time.monotonic() + 60
    while not count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert count(), "the run wrote nothing"
