"""Two stores in two schemas of one database (staging beside production) may share
thread ids. A thread's repair lock is keyed by its schema too: a run on one store never
sees the other's runs as holding its threads."""

from __future__ import annotations

import subprocess
import sys
from subprocess import PIPE

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver

from tests.support.batch_runs import run_repair
from tests.support.cli_runs import last_json, repairs_per_thread_postgres
from tests.support.postgres_threads import hold_claim
from tests.support.seeding import seed_broken
from tests.support.stores import Store

THREADS = 40


async def broken_store(uri: str) -> list[str]:
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        return await seed_broken(Store(saver, is_async=False), THREADS)


async def test_a_thread_held_in_one_schema_is_repaired_in_the_other(
    pg_uri: str, other_pg_uri: str
) -> None:
    thread_ids = await broken_store(pg_uri)
    assert await broken_store(other_pg_uri) == thread_ids
    with psycopg.connect(pg_uri, autocommit=True) as run_on_first:
        hold_claim(run_on_first, thread_ids[0])  # a run mid-repair on the first store
        with PostgresSaver.from_conn_string(other_pg_uri) as saver:
            report = await run_repair(Store(saver, is_async=False))
        assert report.threads_repaired == THREADS and report.skipped == {}
        with PostgresSaver.from_conn_string(pg_uri) as saver:
            held = await run_repair(Store(saver, is_async=False))
        outcomes = {t.thread_id: t.outcome for t in held.threads}
        assert outcomes[thread_ids[0]] == "claimed"  # its own store's lock still holds
    assert repairs_per_thread_postgres(other_pg_uri) == dict.fromkeys(thread_ids, 1)


async def test_two_runs_at_once_on_two_schemas_repair_every_thread_once_in_each(
    pg_uri: str, other_pg_uri: str
) -> None:
    thread_ids = await broken_store(pg_uri)
    await broken_store(other_pg_uri)
    command = [sys.executable, "-m", "langgraph_checkpoint_repair.cli", "repair"]
    runs = [
        subprocess.Popen([*command, uri, "--min-idle", "0", "--json"], stdout=PIPE, text=True)
        for uri in (pg_uri, other_pg_uri)
    ]
    reports = [last_json(run.communicate(timeout=120)[0]) for run in runs]
    assert [r["threads_repaired"] for r in reports] == [THREADS, THREADS]
    assert [r["skipped"] for r in reports] == [{}, {}]
    for uri in (pg_uri, other_pg_uri):
        assert repairs_per_thread_postgres(uri) == dict.fromkeys(thread_ids, 1)
