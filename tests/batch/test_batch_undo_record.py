"""Undo restores only checkpoints whose own metadata names the run, whatever the saver's
`list(filter=...)` or the audit table returns; an unknown run id writes nothing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.batch import UnknownRun
from tests.support.batch_runs import all_checkpoints, head_messages, run_repair, run_undo
from tests.support.oracle import violations
from tests.support.seeding import seed
from tests.support.stores import Store


class FilterIgnoringSaver(InMemorySaver):
    """Like some third-party savers: `list(filter=...)` returns every checkpoint."""

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return super().list(config, before=before, limit=limit)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for tup in super().alist(config, before=before, limit=limit):
            yield tup


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_undo_of_one_run_leaves_another_runs_repairs_alone(is_async: bool) -> None:
    store = Store(FilterIgnoringSaver(), is_async=is_async)
    seeded = await seed(store, bricked=2)
    first, second = seeded.of("bricked")
    r1 = await run_repair(store, threads=[first])
    r2 = await run_repair(store, threads=[second])
    assert (r1.threads_repaired, r2.threads_repaired) == (1, 1)

    undo = await run_undo(store, r2.run_id)
    assert (undo.threads_restored, undo.threads_skipped, undo.errors) == (1, 0, [])
    assert violations(await head_messages(store, second))
    assert not violations(await head_messages(store, first))


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_undo_of_an_unknown_run_writes_nothing(is_async: bool) -> None:
    store = Store(FilterIgnoringSaver(), is_async=is_async)
    await seed(store, bricked=1)
    await run_repair(store)
    before = await all_checkpoints(store)
    with pytest.raises(UnknownRun, match="no repair recorded for run 'run-nope'"):
        await run_undo(store, "run-nope")
    assert await all_checkpoints(store) == before


@contextlib.contextmanager
def postgres(uri: str) -> Iterator[Store]:
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        yield Store(saver, is_async=False)


def run_rows(uri: str) -> list[Any]:
    with psycopg.connect(uri) as conn:
        return conn.execute("SELECT run_id, command FROM langgraph_repair_runs").fetchall()


async def test_undo_on_postgres_trusts_the_checkpoint_over_the_audit_row(pg_uri: str) -> None:
    with postgres(pg_uri) as store:
        seeded = await seed(store, bricked=2)
        first, second = seeded.of("bricked")
        r1 = await run_repair(store, threads=[first])
        r2 = await run_repair(store, threads=[second])
        forged = (r2.run_id, first, r1.threads[0].checkpoint_id, r1.threads[0].repair_checkpoint_id)
        with psycopg.connect(pg_uri) as conn:  # an audit row claiming R2 repaired R1's thread
            conn.execute(
                "INSERT INTO langgraph_repair_threads (run_id, thread_id, checkpoint_ns, "
                "source_checkpoint_id, repair_checkpoint_id, actions) "
                "VALUES (%s, %s, '', %s, %s, '{}')",
                forged,
            )
        runs = run_rows(pg_uri)
        with pytest.raises(UnknownRun):
            await run_undo(store, "run-nope")
        assert run_rows(pg_uri) == runs

        undo = await run_undo(store, r2.run_id)
        assert undo.threads_restored == 1
        assert undo.skipped == [{"thread_id": first, "checkpoint_ns": "", "reason": "not_this_run"}]
        assert violations(await head_messages(store, second))
        assert not violations(await head_messages(store, first))
