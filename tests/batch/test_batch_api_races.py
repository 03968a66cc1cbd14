"""Two runs through the Python API on one saver object, the second one whole inside the
first one's window between its last look at a head and its `put`: real runs on real
savers (in memory, SQLite, PostgreSQL through a pool; sync and async)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import (
    UnknownRun,
    arepair_threads,
    aundo_run,
    repair_threads,
    undo_run,
)
from langgraph_checkpoint_repair.decisions.plan import DETAIL_KEY, RUN_KEY
from langgraph_checkpoint_repair.engine import repair_messages
from langgraph_checkpoint_repair.stores import GenericStore, store_for
from langgraph_checkpoint_repair.stores.sqlite import SqliteStore
from tests.support.batch_runs import head_messages, run_repair, run_undo
from tests.support.seeding import SUBGRAPH_HISTORY, put_in_namespace
from tests.support.stores import Store, open_store

KINDS = ["memory", "amemory", "sqlite", "aiosqlite", "postgres", "apostgres"]
BROKEN = 3


class SecondRunInTheWindow:
    """Runs a whole second run (a repair, or an undo of `undo_of`) on the same saver when
    the first run is about to store its last checkpoint: after its last look at that
    head, before its `put` stores it (hooked into the saver class's own `put`, which
    every store's write goes through)."""

    def __init__(self, store: Store, first_run_puts: int, undo_of: str | None = None) -> None:
        self.store = store
        self.first_run_puts = first_run_puts
        self.undo_of = undo_of
        self.seen: set[str] = set()  # an async put may call the sync one: count ids
        self.report: Any = None

    def due(self, checkpoint: Any, metadata: Any) -> bool:
        kind = (metadata.get(DETAIL_KEY) or {}).get("kind")
        wanted = "undo" if self.undo_of else "repair"
        if kind != wanted or self.report is not None or checkpoint["id"] in self.seen:
            return False
        self.seen.add(checkpoint["id"])
        return len(self.seen) == self.first_run_puts

    def run(self) -> Any:
        saver = self.store.saver
        if self.undo_of is not None:
            return undo_run(saver, self.undo_of)
        return repair_threads(saver, min_idle=timedelta(0))

    async def arun(self) -> Any:
        saver = self.store.saver
        if self.undo_of is not None:
            return await aundo_run(saver, self.undo_of)
        return await arepair_threads(saver, min_idle=timedelta(0))

    def patch(self, monkeypatch: pytest.MonkeyPatch, cls: Any) -> None:
        put, aput = cls.put, cls.aput

        def hooked_put(saver: Any, cfg: Any, checkpoint: Any, metadata: Any, new: Any) -> Any:
            if self.due(checkpoint, metadata):
                self.report = self.run()
            return put(saver, cfg, checkpoint, metadata, new)

        async def hooked_aput(
            saver: Any, cfg: Any, checkpoint: Any, metadata: Any, new: Any
        ) -> Any:
            if self.due(checkpoint, metadata):
                self.report = await self.arun()
            return await aput(saver, cfg, checkpoint, metadata, new)

        monkeypatch.setattr(cls, "put", hooked_put)
        monkeypatch.setattr(cls, "aput", hooked_aput)


async def repairs_by_run(store: Store) -> dict[str, Counter[str]]:
    """thread -> how many repair checkpoints each run id holds on it."""
    found: dict[str, Counter[str]] = {}
    for tup in await store.list(store.saver, None):
        run_id = dict(tup.metadata).get(RUN_KEY)
        if run_id is not None:
            thread = tup.config["configurable"]["thread_id"]
            found.setdefault(thread, Counter())[str(run_id)] += 1
    return found


async def seed_broken(store: Store) -> list[str]:
    """BROKEN threads, each one broken head, stored with the saver's own `put`."""
    threads = [f"window-{n}" for n in range(BROKEN)]
    for thread_id in threads:
        await put_in_namespace(store, thread_id, "", SUBGRAPH_HISTORY)
    return threads


@pytest.mark.parametrize("kind", KINDS)
async def test_a_whole_run_inside_another_runs_window_repairs_nothing_twice(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(kind, tmp_path, request, pooled=True) as store:
        threads = await seed_broken(store)
        second = SecondRunInTheWindow(store, BROKEN)
        second.patch(monkeypatch, type(store.saver))
        first = await run_repair(store, concurrency=1)  # one head at a time: the last is known
        monkeypatch.undo()

        assert second.report is not None, "the second run never ran"
        late = second.report
        assert first.errors == [] and late.errors == []
        assert first.threads_repaired == BROKEN
        assert late.threads_repaired == 0
        assert sum(late.skipped.values()) == 1
        assert set(late.skipped) <= {"claimed", "superseded"}
        assert await repairs_by_run(store) == {t: Counter({first.run_id: 1}) for t in threads}
        for thread_id in threads:
            assert not repair_messages(await head_messages(store, thread_id)).changed

        with pytest.raises(UnknownRun):  # the second run owns no repair: nothing to undo
            await run_undo(store, late.run_id)
        undone = await run_undo(store, first.run_id)
        assert (undone.threads_restored, undone.threads_skipped) == (BROKEN, 0)
        for thread_id in threads:
            assert await head_messages(store, thread_id) == SUBGRAPH_HISTORY


class AppSqliteSaver(SqliteSaver):
    """An application's own subclass that stores as its base class does."""


class LoggingSqliteSaver(SqliteSaver):
    """A subclass with its own `put`: only its own methods may write for it."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return super().put(config, checkpoint, metadata, new_versions)


def test_a_subclass_that_stores_as_its_base_takes_its_locked_path(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False) as conn:
        assert isinstance(store_for(AppSqliteSaver(conn)), SqliteStore)
        assert type(store_for(LoggingSqliteSaver(conn))) is GenericStore


async def undo_runs(store: Store) -> Counter[str]:
    """How many undo checkpoints each run id wrote."""
    found: Counter[str] = Counter()
    for tup in await store.list(store.saver, None):
        metadata: dict[str, Any] = dict(tup.metadata)
        if (metadata.get(DETAIL_KEY) or {}).get("kind") == "undo":
            found[str(metadata[RUN_KEY])] += 1
    return found


@pytest.mark.parametrize("kind", KINDS)
async def test_a_whole_undo_inside_another_undos_window_restores_nothing_twice(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(kind, tmp_path, request, pooled=True) as store:
        threads = await seed_broken(store)
        repaired = await run_repair(store)
        second = SecondRunInTheWindow(store, BROKEN, undo_of=repaired.run_id)
        second.patch(monkeypatch, type(store.saver))
        first = await run_undo(store, repaired.run_id)
        monkeypatch.undo()

        late = second.report
        assert late is not None, "the second undo never ran"
        assert first.errors == [] and late.errors == []
        assert (first.threads_restored, first.threads_skipped) == (BROKEN, 0)
        assert (late.threads_restored, late.threads_skipped) == (0, BROKEN)
        assert {s["reason"] for s in late.skipped} == {"claimed"}
        assert await undo_runs(store) == Counter({first.run_id: BROKEN})
        for thread_id in threads:
            assert await head_messages(store, thread_id) == SUBGRAPH_HISTORY
