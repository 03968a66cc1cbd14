"""The `nul_text` repair through the Python API (`docs/how-to/unreadable-threads.md`): a real graph
bricks a real PostgreSQL thread with text holding U+0000 in a pending write; the run rewrites
that write in place, so the resume applies it without running its task again, and
undo puts the original bytes back. Sync and async runs, real savers, no mocks."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import (
    RunReport,
    UndoReport,
    repair_threads,
    undo_run,
)
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from tests.support.batch_runs import run_repair, run_undo
from tests.support.integrity_threads import NUL_TEXT, brick_with_nul, nul_graph
from tests.support.nul_rows import (
    every_row,
    pending_writes,
    postgres_saver,
    rewrites_recorded,
    set_write_blob,
)
from tests.support.seeding import config
from tests.support.stores import Store

MODES = ["sync", "async"]
SCRUBBED = {"replace": "page one\ufffdpage two", "strip": "page onepage two"}


@contextlib.asynccontextmanager
async def opened(mode: str, uri: str) -> AsyncIterator[Store]:
    """The store through savers of its own, driven sync or async."""
    if mode == "sync":
        with postgres_saver(uri) as saver:
            yield Store(saver, is_async=False)
        return
    async with await psycopg.AsyncConnection.connect(
        uri, autocommit=True, prepare_threshold=0
    ) as conn:
        yield Store(AsyncPostgresSaver(conn), is_async=True)  # type: ignore[arg-type]


async def repair(mode: str, uri: str, **settings: Any) -> RunReport:
    """One run of the batch job over the store, sync or async."""
    async with opened(mode, uri) as store:
        return await run_repair(store, **settings)


async def undo(mode: str, uri: str, run_id: str) -> UndoReport:
    async with opened(mode, uri) as store:
        return await run_undo(store, run_id)


@pytest.fixture
def bricked(pg_uri: str) -> Iterator[str]:
    """A store holding one thread bricked by U+0000 and one healthy thread."""
    with postgres_saver(pg_uri) as saver:
        brick_with_nul(saver, "nul")
        nul_graph(saver, text="fine").invoke({"text": "new"}, config("healthy"))
    yield pg_uri


def resume(uri: str) -> tuple[list[str], Any]:
    """Resume the thread as the application does, with a plain saver: the node's calls
    during the resume, and the state's text after it."""
    calls: list[str] = []
    with postgres_saver(uri) as saver:
        graph = nul_graph(saver, calls)
        graph.invoke(None, config("nul"))
        return calls, graph.get_state(config("nul")).values.get("text")


def still_bricked(uri: str) -> None:
    with postgres_saver(uri) as saver, pytest.raises(psycopg.errors.UntranslatableCharacter):
        nul_graph(saver).invoke(None, config("nul"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("policy", ["replace", "strip"])
async def test_the_write_is_rewritten_in_place_and_the_resume_does_not_run_the_task(
    bricked: str, mode: str, policy: str
) -> None:
    before = pending_writes(bricked, "nul")
    settings: dict[str, Any] = {}
    if policy == "strip":
        from langgraph_checkpoint_repair import RepairPolicy

        settings["policy"] = RepairPolicy(nul_text="strip")
    report = await repair(mode, bricked, **settings)
    kind = "nul_replaced" if policy == "replace" else "nul_stripped"
    assert (report.threads_repaired, report.writes_rewritten) == (1, 1)
    assert report.checkpoints_written == 0
    assert report.actions == {kind: 1}
    (thread,) = report.threads
    assert (thread.thread_id, thread.outcome) == ("nul", "repaired")
    after = pending_writes(bricked, "nul")
    assert [row[:5] for row in after] == [row[:5] for row in before]  # same rows, same keys
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    ((old, new),) = changed  # only the write holding U+0000
    assert b"\x00" in old[5] and b"\x00" not in new[5]
    assert rewrites_recorded(bricked) == [(report.run_id, "nul", old[1], old[2], old[5], new[5])]

    calls, text = resume(bricked)
    assert calls == []  # the pending write was applied: the task did not run again
    assert text == SCRUBBED[policy]

    again = await repair(mode, bricked)
    assert (again.threads_repaired, again.writes_rewritten, again.threads) == (0, 0, [])


@pytest.mark.parametrize("mode", MODES)
async def test_undo_puts_the_original_bytes_back(bricked: str, mode: str) -> None:
    before = pending_writes(bricked, "nul")
    report = await repair(mode, bricked)
    assert report.writes_rewritten == 1

    undone = await undo(mode, bricked, report.run_id)
    assert (undone.threads_restored, undone.writes_restored, undone.skipped) == (1, 1, [])
    assert pending_writes(bricked, "nul") == before  # byte for byte
    still_bricked(bricked)

    twice = await undo(mode, bricked, report.run_id)
    assert (twice.threads_restored, twice.writes_restored) == (0, 0)
    assert [skip["reason"] for skip in twice.skipped] == ["claimed"]
    assert pending_writes(bricked, "nul") == before


async def test_undo_leaves_a_write_the_application_changed_since(bricked: str) -> None:
    report = await repair("sync", bricked)
    set_write_blob(bricked, "nul", "text", b"\xa5newer")
    undone = await undo("sync", bricked, report.run_id)
    assert undone.writes_restored == 0
    assert [skip["reason"] for skip in undone.skipped] == ["moved_on"]
    assert b"\xa5newer" in [row[5] for row in pending_writes(bricked, "nul")]


@pytest.mark.parametrize("mode", MODES)
async def test_a_dry_run_writes_nothing(bricked: str, mode: str) -> None:
    before = every_row(bricked)
    dry = await repair(mode, bricked, dry_run=True)
    assert (dry.threads_repaired, dry.writes_rewritten, dry.checkpoints_written) == (1, 1, 0)
    assert [t.outcome for t in dry.threads] == ["would_repair"]
    assert every_row(bricked) == before  # every row of every table


async def test_a_thread_written_within_min_idle_is_left_alone(bricked: str) -> None:
    before = pending_writes(bricked, "nul")
    recent = await repair("sync", bricked, min_idle=timedelta(hours=1))
    assert recent.skipped == {"recent": 1} and recent.writes_rewritten == 0
    assert pending_writes(bricked, "nul") == before
    assert rewrites_recorded(bricked) == []


def test_an_application_write_between_the_read_and_the_rewrite_wins(
    bricked: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The application stores other bytes for the write after the run read them and
    before it rewrites them: the run leaves the write alone (`moved_on`)."""
    read = PostgresStore.stored_values
    newer = b"\xa5newer"

    def read_then_application_writes(store: PostgresStore, key: Any) -> Any:
        values = read(store, key)
        if key[0] == "nul":
            set_write_blob(bricked, "nul", "text", newer)
        return values

    monkeypatch.setattr(PostgresStore, "stored_values", read_then_application_writes)
    with postgres_saver(bricked) as saver:
        report = repair_threads(saver, min_idle=timedelta(0))
    assert report.skipped == {"moved_on": 1}
    assert (report.threads_repaired, report.writes_rewritten) == (0, 0)
    assert newer in [row[5] for row in pending_writes(bricked, "nul")]
    assert rewrites_recorded(bricked) == []


def test_a_run_inside_another_runs_window_rewrites_once(
    bricked: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run, whole, between the first run's read and its rewrite: the second
    rewrites, the first finds the bytes already rewritten and reports it `claimed`."""
    read = PostgresStore.stored_values
    second: list[RunReport] = []

    def read_then_second_run(store: PostgresStore, key: Any) -> Any:
        values = read(store, key)
        if key[0] == "nul" and not second:
            second.append(RunReport("pending", False))
            with postgres_saver(bricked) as saver:
                second[0] = repair_threads(saver, min_idle=timedelta(0))
        return values

    monkeypatch.setattr(PostgresStore, "stored_values", read_then_second_run)
    with postgres_saver(bricked) as saver:
        first = repair_threads(saver, min_idle=timedelta(0))
    assert second[0].writes_rewritten == 1
    assert first.skipped == {"claimed": 1} and first.writes_rewritten == 0
    assert len(rewrites_recorded(bricked)) == 1
    assert resume(bricked) == ([], SCRUBBED["replace"])


def test_sqlite_keeps_u0000_and_nothing_is_reported(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        nul_graph(saver).invoke({"text": "start"}, config("nul"))
        report = repair_threads(saver, min_idle=timedelta(0))
        assert (report.threads, report.writes_rewritten, dict(report.findings)) == ([], 0, {})
        assert nul_graph(saver).get_state(config("nul")).values["text"] == NUL_TEXT


def test_an_undo_inside_another_undos_window_restores_once(
    bricked: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second undo of the run, whole, after the first read the run's record and before
    it restores: the second restores, the first finds the bytes back already."""
    before = pending_writes(bricked, "nul")
    run_id = asyncio.run(repair("sync", bricked)).run_id
    read = PostgresStore.rewrites_of
    second: list[UndoReport] = []

    def read_then_second_undo(store: PostgresStore, of: str) -> Any:
        found = read(store, of)
        if not second:
            second.append(UndoReport("pending", of))
            with postgres_saver(bricked) as saver:
                second[0] = undo_run(saver, of)
        return found

    monkeypatch.setattr(PostgresStore, "rewrites_of", read_then_second_undo)
    with postgres_saver(bricked) as saver:
        first = undo_run(saver, run_id)
    assert (second[0].writes_restored, first.writes_restored) == (1, 0)
    assert [skip["reason"] for skip in first.skipped] == ["claimed"]
    assert pending_writes(bricked, "nul") == before
