"""A run whose database goes away stops within seconds, with the summary so far and a
one-line reason: exit 1 after writes, 2 before any. Real child processes on a database
of the test's own that the test cuts off (connections ended, new ones refused)."""

from __future__ import annotations

import contextlib
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver

from tests.support.agents import chat_graph
from tests.support.cli_runs import (
    last_json,
    repairs_per_thread_postgres,
    run_cli,
    start_cli,
    wait_for_first_repair,
)
from tests.support.factories import POSTGRES_ENV
from tests.support.histories import ai, human
from tests.support.seeding import config
from tests.support.stores import Store

THREADS = [f"bricked-{n}" for n in range(6)]
SLOW = ("--min-idle", "0", "--concurrency", "1", "--max-writes-per-second", "0.5")
LOST = "langgraph-repair: error: lost the database: "


@contextlib.contextmanager
def own_database(server: str) -> Iterator[tuple[str, str]]:
    """A fresh database no one else uses: (its URI, its name); dropped afterwards."""
    name = f"lost_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield urlunsplit(urlsplit(server)._replace(path=f"/{name}")), name
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def cut_off(server: str, name: str) -> None:
    """New connections refused (superusers included), every open one ended."""
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )


def reopen(server: str, name: str) -> None:
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


async def seed_bricked(uri: str) -> None:
    """Threads whose history has a call never answered, then new input."""
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        store, chat = Store(saver, is_async=False), chat_graph(saver)
        for thread_id in THREADS:
            history = [human("q"), ai("a1", "c1"), human("again")]
            await store.update_state(chat, config(thread_id), {"messages": history}, "chat")


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("langgraph-repair: error")]


def lost_after_writing(
    process: subprocess.Popen[str], uri: str, lose: Callable[[], None]
) -> dict[str, Any]:
    """Once `process` (a slow `repair --json`) wrote its first repair, `lose` the
    database: the run ends within seconds, exit 1, one line; its summary so far."""
    try:
        wait_for_first_repair(lambda: repairs_per_thread_postgres(uri))
        lose()
        stdout, stderr = process.communicate(timeout=30)  # hangs fail the test here
    finally:
        process.kill()
    assert process.returncode == 1, stderr
    errors = error_lines(stderr)
    assert len(errors) == 1, stderr
    assert errors[0].startswith(LOST)
    assert errors[0].endswith("repairs; run the command again to finish)")
    assert [line for line in stderr.splitlines() if line not in errors] == [], stderr
    summary = last_json(stdout)
    assert summary["checkpoints_written"] >= 1
    return summary


async def test_a_run_that_loses_its_database_after_writing_stops_with_exit_1(
    postgres_server: str,
) -> None:
    with own_database(postgres_server) as (uri, name):
        await seed_bricked(uri)
        process = start_cli("repair", uri, *SLOW, "--json")
        summary = lost_after_writing(process, uri, lambda: cut_off(postgres_server, name))
        assert summary["errors"] == []  # the loss is the run's, not some threads'

        reopen(postgres_server, name)
        written = repairs_per_thread_postgres(uri)
        assert written and set(written.values()) == {1}
        finish = run_cli("repair", uri, "--min-idle", "0", "--json")
        assert finish.returncode == 0, finish.stderr
        assert repairs_per_thread_postgres(uri) == dict.fromkeys(THREADS, 1)


async def test_an_async_run_that_loses_its_database_stops_with_exit_1(
    postgres_server: str,
) -> None:
    with own_database(postgres_server) as (uri, name):
        await seed_bricked(uri)
        factory = "tests.support.factories:async_postgres_saver"
        process = start_cli("repair", factory, *SLOW, "--json", **{POSTGRES_ENV: uri})
        lost_after_writing(process, uri, lambda: cut_off(postgres_server, name))


def wait_for_lock_wait(server: str, name: str) -> None:
    """Until some session of database `name` waits for a lock."""
    deadline = time.monotonic() + 20
    with psycopg.connect(server, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = %s AND wait_event_type = 'Lock'",
                (name,),
            ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the run never waited for the lock")


async def test_a_run_that_loses_its_database_before_writing_stops_with_exit_2(
    postgres_server: str,
) -> None:
    with own_database(postgres_server) as (uri, name):
        await seed_bricked(uri)
        before = repairs_per_thread_postgres(uri)
        holder = psycopg.connect(uri)
        holder.execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
        process = start_cli("repair", uri, "--min-idle", "0")
        try:
            wait_for_lock_wait(postgres_server, name)  # the run is blocked before any write
            cut_off(postgres_server, name)
            _, stderr = process.communicate(timeout=30)
        finally:
            process.kill()
            with contextlib.suppress(psycopg.Error):
                holder.close()
        assert process.returncode == 2, stderr
        errors = error_lines(stderr)
        assert len(errors) == 1, stderr
        assert errors[0].startswith(LOST)
        assert "Traceback" not in stderr
        reopen(postgres_server, name)
        assert repairs_per_thread_postgres(uri) == before == {}
