"""Two saver objects over one store, driven through the public API only (as two
processes would be): nothing locks a head across them, so a whole second run can
fit between one run's last look at a head and its `put`. The store still keeps one
repair checkpoint for the head, but both runs count it; what the README says."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import RunReport, UnknownRun, repair_threads, undo_run
from langgraph_checkpoint_repair.decisions.plan import DETAIL_KEY, RUN_KEY
from langgraph_checkpoint_repair.stores import GenericStore, store_for
from tests.support.seeding import SUBGRAPH_HISTORY, put_in_namespace
from tests.support.stores import Store


class WindowedSaver(SqliteSaver):
    """A SqliteSaver that stores as its base does, but whose `put` of its first repair
    checkpoint first lets `before_put` run (its own `put`: so the generic path drives it)."""

    before_put: Any = None

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        hook, self.before_put = self.before_put, None
        if hook is not None and kind(metadata) == "repair":
            hook()
        return super().put(config, checkpoint, metadata, new_versions)


def kind(metadata: Any) -> Any:
    """ "repair" or "undo" for a checkpoint a run wrote."""
    return (dict(metadata).get(DETAIL_KEY) or {}).get("kind")


def saver_on(path: Path) -> WindowedSaver:
    return WindowedSaver(sqlite3.connect(path, check_same_thread=False))


async def test_a_whole_run_between_another_runs_last_look_and_put_counts_twice(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"
    first, second = saver_on(path), saver_on(path)
    await put_in_namespace(Store(first, is_async=False), "shared", "", SUBGRAPH_HISTORY)
    assert isinstance(store_for(first), GenericStore) and type(store_for(first)) is GenericStore
    reports: list[RunReport] = []
    first.before_put = lambda: reports.append(repair_threads(second, min_idle=timedelta(0)))
    reports.insert(0, repair_threads(first, min_idle=timedelta(0)))

    assert [r.threads_repaired for r in reports] == [1, 1]  # both count the one repair
    repairs = [t for t in first.list(None) if kind(t.metadata) == "repair"]
    assert len(repairs) == 1  # the same checkpoint id: the later put replaced the earlier
    assert dict(repairs[0].metadata)[RUN_KEY] == reports[0].run_id  # it names the later writer
    with pytest.raises(UnknownRun):  # the earlier writer's record was replaced
        undo_run(second, reports[1].run_id)
    assert undo_run(first, reports[0].run_id).threads_restored == 1
    first.conn.close()
    second.conn.close()
