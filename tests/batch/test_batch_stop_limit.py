"""What a run counts when it is stopped mid-page, and what `--limit` counts when other
runs hold some threads (real savers; the other run's lock is a real advisory lock)."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.decisions.plan import RUN_KEY
from tests.support.batch_runs import run_repair
from tests.support.postgres_threads import hold_claim
from tests.support.seeding import seed_broken
from tests.support.stores import Store

THREADS = 5


class StoppedAtFirstRepair(InMemorySaver):
    """An in-memory saver whose first stored repair asks the run to stop (a signal
    arriving while that write is under way)."""

    def __init__(self) -> None:
        super().__init__()
        self.stop = threading.Event()

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if RUN_KEY in metadata:
            self.stop.set()
        return super().put(config, checkpoint, metadata, new_versions)


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_run_stopped_mid_page_counts_only_the_heads_it_looked_at(is_async: bool) -> None:
    saver = StoppedAtFirstRepair()
    store = Store(saver, is_async=is_async)
    await seed_broken(store, THREADS)  # one page: every head broken
    report = await run_repair(store, concurrency=1, stop=saver.stop)
    assert report.stopped
    assert (report.threads_scanned, report.threads_repaired) == (1, 1)
    again = await run_repair(store)
    assert (again.threads_scanned, again.threads_repaired) == (THREADS, THREADS - 1)


async def test_threads_another_run_holds_do_not_use_up_the_limit(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        thread_ids = await seed_broken(store, 3)
        first, second, third = sorted(thread_ids, reverse=True)  # the order a run takes them
        with psycopg.connect(pg_uri, autocommit=True) as other_run:
            hold_claim(other_run, first)
            report = await run_repair(store, concurrency=1, limit=1)
        outcomes = {t.thread_id: t.outcome for t in report.threads}
        assert outcomes == {first: "claimed", second: "repaired", third: "limit"}
        assert report.threads_repaired == 1
