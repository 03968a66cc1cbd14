"""A PostgreSQL table locked by another session in the middle of a run: the threads the
run could not reach are each named on one line, the exit code is 1 (some threads were
done), and the next run, once the lock is gone, finishes the work."""

from __future__ import annotations

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver

from tests.support.cli_runs import (
    last_json,
    repairs_per_thread_postgres,
    run_cli,
    start_cli,
    wait_for_first_repair,
)
from tests.support.seeding import brick
from tests.support.stores import Store

THREADS = [f"bricked-{n}" for n in range(4)]


async def test_a_lock_taken_mid_run_fails_the_threads_it_blocks_and_names_them(
    pg_uri: str,
) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        for thread_id in THREADS:
            await brick(Store(saver, is_async=False), thread_id)
    slow = ("--min-idle", "0", "--concurrency", "1", "--max-writes-per-second", "0.5")
    process = start_cli("repair", pg_uri, *slow, "--json")
    wait_for_first_repair(lambda: repairs_per_thread_postgres(pg_uri))
    with psycopg.connect(pg_uri) as holder:
        holder.execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr
    done = repairs_per_thread_postgres(pg_uri)
    assert 1 <= len(done) < len(THREADS)
    report = last_json(stdout)  # the summary so far
    assert report["threads_repaired"] == len(done)
    failed = {error["thread_id"] for error in report["errors"]}
    assert failed == set(THREADS) - set(done)  # each named, with its own error
    assert all("lock timeout" in error["error"] for error in report["errors"])
    assert stderr.splitlines() == [
        "langgraph-repair: error: a table is locked by another session (gave up waiting): "
        f"canceling statement due to lock timeout (after {len(done)} repairs; "
        "run the command again to finish)"
    ]

    finish = run_cli("repair", pg_uri, "--min-idle", "0", "--json")
    assert finish.returncode == 0, finish.stderr
    assert repairs_per_thread_postgres(pg_uri) == dict.fromkeys(THREADS, 1)
