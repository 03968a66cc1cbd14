"""The application wins: a thread the old release resumes while a run re-targets it is
left as the application left it (the run's write finds the head moved on)."""

from __future__ import annotations

import subprocess
import uuid
from subprocess import PIPE
from typing import Any

import pytest
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import arepair_threads, repair_threads
from tests.batch.test_batch_races import (
    application_saver,
    repair_command,
    repairs_per_thread,
    report_of,
)
from tests.support.asking_graphs import drivable
from tests.support.cli_runs import last_json, run_cli
from tests.support.release_graphs import compiled
from tests.support.stores import Store, cli_store


class ResumeOnLoad:
    """The old release answers the thread the moment the run loads its head."""

    def __init__(self, store: Store, app: Any, thread_id: str) -> None:
        self.store, self.thread_id, self.done = store, thread_id, False
        self.graph = compiled("interrupt", 1, app)

    def due(self, cfg: Any) -> bool:
        configurable = cfg["configurable"]
        found = configurable["thread_id"] == self.thread_id and configurable.get("checkpoint_id")
        if self.done or not found:
            return False
        self.done = True
        return True

    def patch(self, monkeypatch: pytest.MonkeyPatch, cls: Any) -> None:
        get_tuple, aget_tuple = cls.get_tuple, cls.aget_tuple
        thread = {"configurable": {"thread_id": self.thread_id}}

        def hooked(saver: Any, cfg: Any) -> Any:
            tup = get_tuple(saver, cfg)
            if self.due(cfg):
                self.graph.invoke(Command(resume="yes"), thread)
            return tup

        async def ahooked(saver: Any, cfg: Any) -> Any:
            tup = await aget_tuple(saver, cfg)
            if self.due(cfg):
                await self.graph.ainvoke(Command(resume="yes"), thread)
            return tup

        monkeypatch.setattr(cls, "get_tuple", hooked)
        monkeypatch.setattr(cls, "aget_tuple", ahooked)


async def test_the_application_resumes_mid_run_and_wins(
    store: Store, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    drivable(store)
    thread_id = f"t-{uuid.uuid4().hex[:8]}"
    config: Any = {"configurable": {"thread_id": thread_id}}
    await store.invoke(compiled("interrupt", 1, store.saver), {"topic": "x"}, config)
    new = compiled("interrupt", 2)
    settings: Any = {"min_idle": 0, "graph": new, "renamed_nodes": {"ask": "ask2"}}
    async with application_saver(store, request) as app:
        racer = ResumeOnLoad(store, app, thread_id)
        racer.patch(monkeypatch, type(store.saver))
        if store.is_async:
            report = await arepair_threads(store.saver, **settings)
        else:
            report = repair_threads(store.saver, **settings)
        monkeypatch.undo()
    assert racer.done
    assert report.skipped == {"moved_on": 1} and report.checkpoints_written == 0
    state = await store.get_state(compiled("interrupt", 2, store.saver), config)
    assert state.next == () and state.values["log"] == ["after yes"]


PAUSED = 12


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
async def test_shards_split_the_gate_and_two_runs_retarget_each_thread_once(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """Two shards' gates add up to the whole store's; two runs at once (real processes)
    move each thread's work exactly once."""
    graph = "tests.support.release_graphs:release_2_asking"
    with cli_store(kind, request) as (target, store):
        old = compiled("interrupt", 1, store.saver)
        threads = [f"paused-{n:02d}" for n in range(PAUSED)]
        for thread_id in threads:
            await store.invoke(old, {"topic": "x"}, {"configurable": {"thread_id": thread_id}})
        looks = ["--graph", graph, "--min-idle", "0", "--json"]
        shards = [run_cli("scan", target, *looks, "--shard", f"{k}/2") for k in (0, 1)]
        found = [last_json(shard.stdout)["findings"].get("node_missing", 0) for shard in shards]
        assert sum(found) == PAUSED
        assert [shard.returncode for shard in shards] == [1 if n else 0 for n in found]

        command = [*repair_command(target), *looks, "--node-renamed", "ask=ask2"]
        runs = [subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True) for _ in "ab"]
        reports = [report_of(run) for run in runs]
        assert repairs_per_thread(store.saver) == {t: 1 for t in threads}
        assert sum(r["threads_repaired"] for r in reports) == PAUSED
        new = compiled("interrupt", 2, store.saver)
        for thread_id in threads:
            state = await store.get_state(new, {"configurable": {"thread_id": thread_id}})
            assert state.next == ("ask2",) and len(state.interrupts) == 1
