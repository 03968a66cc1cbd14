"""`repair_threads`, `undo_run` and their async twins: thin I/O shells over the
stores and the pure rules in `stores.plan` and `options`."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..delta import aload_rebuilt, is_snapshot, load_rebuilt, snapshot_value
from ..stores import AsyncThreadStore, Head, RepairEntry, ThreadStore, astore_for, store_for
from ..stores.base import entry_from_metadata
from ..stores.faults import store_lost
from ..stores.plan import (
    DETAIL_KEY,
    Assessment,
    NewCheckpoint,
    assess,
    checkpoint_on_top,
    new_run_id,
    repair_detail,
    undo_detail,
)
from ..stores.races import WriteOutcome, head_moved
from .options import Pacer, ProgressFn, Quota, RunOptions, outcome_before_writing
from .report import RunReport, StoreLost, UndoReport, UnknownRun, first_line

logger = logging.getLogger("langgraph_checkpoint_repair.batch")


def stored_saver(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """The saver that holds the data: a wrapper (e.g. PatchingCheckpointer, whose
    loads show a repaired view) is looked through, so the job sees what is stored."""
    inner = getattr(saver, "saver", None)
    return stored_saver(inner) if isinstance(inner, BaseCheckpointSaver) else saver


def repair_threads(
    saver: BaseCheckpointSaver[Any],
    options: RunOptions | None = None,
    *,
    command: str = "repair",
    on_progress: ProgressFn | None = None,
    stop: threading.Event | None = None,
    **settings: Any,
) -> RunReport:
    """Walk every thread head of `saver` and append a repair checkpoint where one is due.

    `settings` are `RunOptions` fields (`dry_run`, `threads`, `min_idle`, `shard`,
    `concurrency`, `limit`, `policy`, `channels`, `max_writes_per_second`). Setting
    `stop` (from a signal handler, say) ends the run early: writes under way finish,
    no new one starts, and the report so far is returned with `stopped` set.
    A store that goes away mid-run (connections ended, new ones refused) raises
    `StoreLost` at once, carrying the report so far; it also sets `stop`.
    """
    options = options or RunOptions(**settings)
    run = _SyncRun(store_for(stored_saver(saver)), options, command, on_progress, stop)
    return run.run()


async def arepair_threads(
    saver: BaseCheckpointSaver[Any],
    options: RunOptions | None = None,
    *,
    command: str = "repair",
    on_progress: ProgressFn | None = None,
    stop: threading.Event | None = None,
    **settings: Any,
) -> RunReport:
    """The async twin of `repair_threads`."""
    options = options or RunOptions(**settings)
    run = _AsyncRun(astore_for(stored_saver(saver)), options, command, on_progress, stop)
    return await run.run()


class _Run:
    """State shared by the sync and async runs."""

    def __init__(
        self,
        store: Any,
        options: RunOptions,
        command: str,
        on_progress: ProgressFn | None,
        stop: threading.Event | None,
    ) -> None:
        self.store = store
        self.options = options
        self.command = command
        self.on_progress = on_progress or (lambda report: None)
        self.report = RunReport(options.run_id, options.dry_run)
        self.quota = Quota(options.limit)
        self.stop = stop or threading.Event()
        self.pacer = Pacer(options.max_writes_per_second, self.stop)
        self.lost: BaseException | None = None
        """The failure that showed the store is gone; no thread is started after it."""

    def failed(self, head: Head, error: Exception) -> None:
        """One thread failed; a store that is gone ends the whole run instead."""
        if not store_lost(error):
            self.report.failed(head.thread_id, head.checkpoint_ns, error)
            return
        if self.lost is None:
            self.lost = error
        self.stop.set()  # workers waiting for their turn give up; none starts

    def raise_if_lost(self) -> None:
        if self.lost is not None:
            raise self.lost

    def lost_store(self, error: Exception) -> StoreLost:
        """The run's end when its store went away: the reason, one line, and the report."""
        self.report.stopped = True
        return StoreLost(first_line(error), self.report)

    def page_done(self) -> bool:
        """Report progress; True when the run must end here (it was stopped)."""
        report, wanted = self.report, self.options.channels
        report.stopped = self.stop.is_set()
        if report.threads_scanned and not report.stopped:
            report.channels_not_found = [c for c in wanted if c not in report.channels_seen]
        self.on_progress(report)
        return report.stopped

    def wrote(self, assessment: Assessment, new: NewCheckpoint, outcome: WriteOutcome) -> None:
        """Report what a write turned out to be: only a repaired head counts as repaired."""
        if outcome != "repaired":
            written = new.checkpoint_id if outcome == "superseded" else None
            self.report.record(assessment, outcome, written)
            logger.info(
                "%s thread=%r ns=%r", outcome, assessment.thread_id, assessment.checkpoint_ns
            )
            return
        self.report.record(assessment, "repaired", new.checkpoint_id)
        logger.info(
            "repaired thread=%r ns=%r checkpoint=%r -> %r actions=%s",
            assessment.thread_id,
            assessment.checkpoint_ns,
            assessment.checkpoint_id,
            new.checkpoint_id,
            {name: [a.kind for a in acts] for name, acts in assessment.actions.items()},
        )

    def take_page(self, page: list[Head]) -> list[Head]:
        self.report.scanned(len(page))
        self.report.saw(name for head in page for name in head.channels)
        if self.options.policy.provider is not None:  # the first look knows pairing only
            return page
        return [head for head in page if head.maybe_broken]

    def assess(self, tup: CheckpointTuple) -> Assessment:
        o = self.options
        self.report.saw(c for c in o.channels if c in tup.checkpoint["channel_values"])
        return assess(tup, channels=o.channels, policy=o.policy, min_idle=o.idle, now=o.started)

    def plan_write(self, tup: CheckpointTuple, assessment: Assessment) -> NewCheckpoint | None:
        """The repair checkpoint to write on `tup` (as stored), or None when the head
        needs no write now."""
        outcome = outcome_before_writing(assessment, self.options.dry_run)
        if outcome is None:
            return None
        if outcome in ("repair", "would_repair") and not self.quota.take():
            outcome = "limit"  # over --limit: counted, left for the next run
        if outcome != "repair":
            self.report.record(assessment, outcome)
            return None
        detail = repair_detail(assessment)
        saver, run_id = self.store.saver, self.options.run_id
        return checkpoint_on_top(
            tup, assessment.repaired, saver.get_next_version, detail, run_id, assessment.snapshots
        )


class _SyncRun(_Run):
    store: ThreadStore

    def run(self) -> RunReport:
        try:
            return self.run_pages()
        except Exception as error:
            if store_lost(error):
                raise self.lost_store(error) from error
            raise

    def run_pages(self) -> RunReport:
        if not self.options.dry_run:
            self.store.begin_run(self.options.run_id, self.command, self.options.arguments())
        with ThreadPoolExecutor(self.options.concurrency) as pool:
            for page in self.store.pages(self.options.selection):
                list(pool.map(self.process, self.take_page(page)))
                self.raise_if_lost()
                if self.page_done():
                    break
        if not self.options.dry_run:
            self.store.finish_run(self.options.run_id, self.report.to_json())
        return self.report

    def process(self, head: Head) -> None:
        if self.stop.is_set():
            return
        try:
            stored = self.store.load(head)
            if stored is None:
                return
            tup, _ = load_rebuilt(self.store.saver, stored, self.options.channels)
            assessment = self.assess(tup)
            new = self.plan_write(stored, assessment)
            if new is not None:
                self.write(assessment, new)
        except Exception as error:
            self.failed(head, error)

    def write(self, assessment: Assessment, new: NewCheckpoint) -> None:
        current = self.store.head_id(assessment.thread_id, assessment.checkpoint_ns)
        moved = head_moved(current, assessment, new)  # before waiting for the pacer
        if moved is not None:
            self.report.record(assessment, moved)
            return
        if not self.pacer.wait():
            return  # stopped while waiting for its turn: left for the next run
        self.wrote(assessment, new, self.store.write_repair(self.options.run_id, assessment, new))


class _AsyncRun(_Run):
    store: AsyncThreadStore

    async def run(self) -> RunReport:
        try:
            return await self.run_pages()
        except Exception as error:
            if store_lost(error):
                raise self.lost_store(error) from error
            raise

    async def run_pages(self) -> RunReport:
        if not self.options.dry_run:
            await self.store.begin_run(self.options.run_id, self.command, self.options.arguments())
        gate = asyncio.Semaphore(self.options.concurrency)
        async for page in self.store.pages(self.options.selection):
            await asyncio.gather(*(self.process(head, gate) for head in self.take_page(page)))
            self.raise_if_lost()
            if self.page_done():
                break
        if not self.options.dry_run:
            await self.store.finish_run(self.options.run_id, self.report.to_json())
        return self.report

    async def process(self, head: Head, gate: asyncio.Semaphore) -> None:
        async with gate:
            if self.stop.is_set():
                return
            try:
                stored = await self.store.load(head)
                if stored is None:
                    return
                tup, _ = await aload_rebuilt(self.store.saver, stored, self.options.channels)
                assessment = self.assess(tup)
                new = self.plan_write(stored, assessment)
                if new is not None:
                    await self.write(assessment, new)
            except Exception as error:
                self.failed(head, error)

    async def write(self, assessment: Assessment, new: NewCheckpoint) -> None:
        current = await self.store.head_id(assessment.thread_id, assessment.checkpoint_ns)
        moved = head_moved(current, assessment, new)  # before waiting for the pacer
        if moved is not None:
            self.report.record(assessment, moved)
            return
        if not await self.pacer.await_turn():
            return  # stopped while waiting for its turn: left for the next run
        outcome = await self.store.write_repair(self.options.run_id, assessment, new)
        self.wrote(assessment, new, outcome)


def migrate(saver: BaseCheckpointSaver[Any]) -> list[str] | None:
    """Apply the audit-table migrations the store still lacks; return their names.

    None when the store keeps its audit in checkpoint metadata (SQLite, any saver).
    """
    store = store_for(stored_saver(saver))
    apply: Any = getattr(store, "migrate", None)
    return None if apply is None else list(apply())


def undo_run(saver: BaseCheckpointSaver[Any], run_id: str) -> UndoReport:
    """Restore, append-only, every thread `run_id` repaired whose head is still that repair."""
    store = store_for(stored_saver(saver))
    report = UndoReport(new_run_id(), run_id)
    entries = known_repairs(run_id, list(store.repairs_of(run_id)))
    store.begin_run(report.run_id, "undo", {"undo_of": run_id})
    for entry in entries:
        try:
            head = store.load(_head(entry, entry.repair_checkpoint_id))
            current = store.head_id(entry.thread_id, entry.checkpoint_ns)
            source = _rebuilt(store.saver, store.load(_head(entry, entry.source_checkpoint_id)))
            new = _restoring(store.saver, entry, head, current, source, report)
            if new is not None:
                store.write(new)
                report.threads_restored += 1
        except Exception as error:
            if store_lost(error):  # every later thread would fail too, each after a wait
                raise
            report.errors.append(_failure(entry, error))
    store.finish_run(report.run_id, report.to_json())
    return report


async def aundo_run(saver: BaseCheckpointSaver[Any], run_id: str) -> UndoReport:
    """The async twin of `undo_run`."""
    store = astore_for(stored_saver(saver))
    report = UndoReport(new_run_id(), run_id)
    entries = known_repairs(run_id, [entry async for entry in store.repairs_of(run_id)])
    await store.begin_run(report.run_id, "undo", {"undo_of": run_id})
    for entry in entries:
        try:
            head = await store.load(_head(entry, entry.repair_checkpoint_id))
            current = await store.head_id(entry.thread_id, entry.checkpoint_ns)
            source = await store.load(_head(entry, entry.source_checkpoint_id))
            if source is not None:
                source, _ = await aload_rebuilt(store.saver, source, None)
            new = _restoring(store.saver, entry, head, current, source, report)
            if new is not None:
                await store.write(new)
                report.threads_restored += 1
        except Exception as error:
            if store_lost(error):  # every later thread would fail too, each after a wait
                raise
            report.errors.append(_failure(entry, error))
    await store.finish_run(report.run_id, report.to_json())
    return report


def _rebuilt(
    saver: BaseCheckpointSaver[Any], tup: CheckpointTuple | None
) -> CheckpointTuple | None:
    """A source checkpoint with its delta message channels rebuilt: what it showed."""
    return None if tup is None else load_rebuilt(saver, tup, None)[0]


def known_repairs(run_id: str, entries: list[RepairEntry]) -> list[RepairEntry]:
    """The run's recorded repairs; none means an unknown run id, refused before any write."""
    if not entries:
        raise UnknownRun(f"no repair recorded for run {run_id!r}: nothing to undo")
    return entries


def _head(entry: RepairEntry, checkpoint_id: str) -> Head:
    return Head(entry.thread_id, entry.checkpoint_ns, checkpoint_id)


def _restoring(
    saver: BaseCheckpointSaver[Any],
    entry: RepairEntry,
    head: CheckpointTuple | None,
    current_head_id: str | None,
    source: CheckpointTuple | None,
    report: UndoReport,
) -> NewCheckpoint | None:
    """A checkpoint on top of the repair that puts back the channels as they were
    before it; None (and a reason in the report) when the thread must be left alone."""
    reason = _why_not_restore(report.undo_of, entry, head, current_head_id, source)
    if reason is not None:
        _skip(report, entry, reason)
        return None
    assert head is not None and source is not None
    detail: dict[str, Any] = head.metadata.get(DETAIL_KEY) or {}  # type: ignore[assignment]
    channels: Iterable[str] = detail.get("actions", {}).keys()
    shown = source.checkpoint["channel_values"]
    values = {name: snapshot_value(shown[name]) for name in channels if name in shown}
    written = head.checkpoint["channel_values"]
    snapshots = [name for name in values if is_snapshot(written.get(name))]
    undo = undo_detail(report.undo_of, entry.repair_checkpoint_id)
    return checkpoint_on_top(head, values, saver.get_next_version, undo, report.run_id, snapshots)


def _why_not_restore(
    run_id: str,
    entry: RepairEntry,
    head: CheckpointTuple | None,
    current_head_id: str | None,
    source: CheckpointTuple | None,
) -> str | None:
    if head is None:  # the run stopped between its audit record and its write
        return "not_written"
    if entry_from_metadata(head, run_id) != entry:  # trust the checkpoint, not the listing
        return "not_this_run"
    if current_head_id != entry.repair_checkpoint_id:
        return "moved_on"
    return "source_missing" if source is None else None


def _skip(report: UndoReport, entry: RepairEntry, reason: str) -> None:
    """Count a thread the undo leaves alone, and say why."""
    report.threads_skipped += 1
    report.skipped.append(
        {"thread_id": entry.thread_id, "checkpoint_ns": entry.checkpoint_ns, "reason": reason}
    )


def _failure(entry: RepairEntry, error: BaseException) -> dict[str, str]:
    return {
        "thread_id": entry.thread_id,
        "checkpoint_ns": entry.checkpoint_ns,
        "error": first_line(error),
    }
