"""`undo_run` and its async twin: restore, append-only, what a repair run changed.

A rewind (`--rewind-unreadable`) is undone by copying the unreadable head's row,
as stored, on top of the rewind (`decisions.rewind.RowCopy`): nothing is decoded. So is
a `type_moved` repair, whose source names a type that cannot be built here.

Each restore is a checkpoint on top of the run's repair, claimed and written as
a repair is (`decisions.races`), so undos of one run at once restore each thread
once; an undo obeys a stop request and a write rate as a repair run does.
Pending writes a run rewrote in place (`decisions.rewrites`) get their original bytes
back, each only while it still holds the bytes the run wrote, under the same lock.
What is restored, and why a thread is left alone, is decided in `restoring`; the
shells here only read and write.
"""

from __future__ import annotations

import threading
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decisions.rewind import undone_by_copy
from ..decisions.rewrites import by_checkpoint, undo_changes
from ..decisions.undo_plans import copy_plan, repair_at, restore_plan
from ..decoding.strict import refusals
from ..stores import AsyncThreadStore, RepairEntry, ThreadStore, astore_for, store_for
from ..stores.history import aload_rebuilt, load_rebuilt
from . import checks
from .report import UndoReport
from .restoring import UndoLedger, head_at, known_repairs, planned_head, source_key


def undo_run(
    saver: BaseCheckpointSaver[Any],
    run_id: str,
    *,
    stop: threading.Event | None = None,
    max_writes_per_second: float | None = None,
) -> UndoReport:
    """Restore, append-only, every thread `run_id` repaired whose head is still that repair.

    Each restore is claimed and written as a repair is, so undos of one run at once
    restore each thread once and their reports add up. Setting `stop` ends the undo
    between threads (the write under way finishes) with `stopped` set in the report;
    running it again restores what is left.
    """
    checks.rate(max_writes_per_second)
    return _SyncUndo(store_for(saver), UndoLedger(run_id, stop, max_writes_per_second)).run()


async def aundo_run(
    saver: BaseCheckpointSaver[Any],
    run_id: str,
    *,
    stop: threading.Event | None = None,
    max_writes_per_second: float | None = None,
) -> UndoReport:
    """The async twin of `undo_run`."""
    checks.rate(max_writes_per_second)
    undo = _AsyncUndo(astore_for(saver), UndoLedger(run_id, stop, max_writes_per_second))
    return await undo.run()


class _SyncUndo:
    def __init__(self, store: ThreadStore, ledger: UndoLedger) -> None:
        self.store = store
        self.ledger = ledger
        self.report = ledger.report

    def run(self) -> UndoReport:
        store, report = self.store, self.report
        entries = list(store.repairs_of(report.undo_of))
        rewrites = store.rewrites_of(report.undo_of)
        known_repairs(report.undo_of, entries, rewrites)
        store.ready_to_write(undo_changes(rewrites, any(e.moved_work for e in entries)))
        store.begin_run(report.run_id, "undo", {"undo_of": report.undo_of})
        for entry in entries:
            if self.ledger.stopping():
                break
            with self.ledger.each(entry):
                self.undo(entry)
        for writes in by_checkpoint(rewrites):
            if self.ledger.stopping() or not self.ledger.pacer.wait():
                break
            with self.ledger.each(writes[0]):
                self.ledger.restored(writes, store.restore_writes(writes))
        store.finish_run(report.run_id, report.to_json())
        return report

    def undo(self, entry: RepairEntry) -> None:
        """Put back one thread the run repaired, or say why it is left alone."""
        store = self.store
        if getattr(store, "replaces_heads", False):  # no history to append to
            if self.ledger.pacer.wait():
                self.ledger.wrote(entry, store.put_back(self.report.undo_of, repair_at(entry)))  # type: ignore[attr-defined]
            return
        with refusals() as refused:
            head = store.load(planned_head(entry))
            current = store.head_id(entry.thread_id, entry.checkpoint_ns)
            if head is not None and undone_by_copy(head.metadata):
                present = store.chain_link(source_key(entry)) is not None
                copied = copy_plan(
                    self.ledger.undoing, store.rewinds, entry, head, current, present
                )
                copy = self.ledger.planned(entry, copied)
                if copy is not None and self.ledger.pacer.wait():
                    outcome = store.write_copy(self.report.run_id, planned_head(entry), copy)
                    self.ledger.wrote(entry, outcome)
                return
            source = _rebuilt(store.saver, store.load(head_at(entry, entry.source_checkpoint_id)))
        types = store.row_types(entry.thread_id, entry.checkpoint_ns)
        found = (head, current, source)
        plan = restore_plan(self.ledger.undoing, store.saver, entry, found, types, refused)
        new = self.ledger.planned(entry, plan)
        if new is not None and self.ledger.pacer.wait():
            outcome = store.write_undo(self.report.run_id, planned_head(entry), new)
            self.ledger.wrote(entry, outcome)


class _AsyncUndo:
    def __init__(self, store: AsyncThreadStore, ledger: UndoLedger) -> None:
        self.store = store
        self.ledger = ledger
        self.report = ledger.report

    async def run(self) -> UndoReport:
        store, report = self.store, self.report
        entries = [entry async for entry in store.repairs_of(report.undo_of)]
        rewrites = await store.rewrites_of(report.undo_of)
        known_repairs(report.undo_of, entries, rewrites)
        await store.ready_to_write(undo_changes(rewrites, any(e.moved_work for e in entries)))
        await store.begin_run(report.run_id, "undo", {"undo_of": report.undo_of})
        for entry in entries:
            if self.ledger.stopping():
                break
            with self.ledger.each(entry):
                await self.undo(entry)
        for writes in by_checkpoint(rewrites):
            if self.ledger.stopping() or not await self.ledger.pacer.await_turn():
                break
            with self.ledger.each(writes[0]):
                self.ledger.restored(writes, await store.restore_writes(writes))
        await store.finish_run(report.run_id, report.to_json())
        return report

    async def undo(self, entry: RepairEntry) -> None:
        """The twin of `_SyncUndo.undo`."""
        store = self.store
        if getattr(store, "replaces_heads", False):
            if await self.ledger.pacer.await_turn():
                outcome = await store.put_back(self.report.undo_of, repair_at(entry))  # type: ignore[attr-defined]
                self.ledger.wrote(entry, outcome)
            return
        with refusals() as refused:
            head = await store.load(planned_head(entry))
            current = await store.head_id(entry.thread_id, entry.checkpoint_ns)
            if head is not None and undone_by_copy(head.metadata):
                present = await store.chain_link(source_key(entry)) is not None
                copied = copy_plan(
                    self.ledger.undoing, store.rewinds, entry, head, current, present
                )
                copy = self.ledger.planned(entry, copied)
                if copy is not None and await self.ledger.pacer.await_turn():
                    outcome = await store.write_copy(self.report.run_id, planned_head(entry), copy)
                    self.ledger.wrote(entry, outcome)
                return
            loaded = await store.load(head_at(entry, entry.source_checkpoint_id))
            source = await _arebuilt(store.saver, loaded)
        types = await store.row_types(entry.thread_id, entry.checkpoint_ns)
        found = (head, current, source)
        plan = restore_plan(self.ledger.undoing, store.saver, entry, found, types, refused)
        new = self.ledger.planned(entry, plan)
        if new is not None and await self.ledger.pacer.await_turn():
            outcome = await store.write_undo(self.report.run_id, planned_head(entry), new)
            self.ledger.wrote(entry, outcome)


def _rebuilt(
    saver: BaseCheckpointSaver[Any], tup: CheckpointTuple | None
) -> CheckpointTuple | None:
    """A source checkpoint with its delta message channels rebuilt: what it showed."""
    return None if tup is None else load_rebuilt(saver, tup, None)[0]


async def _arebuilt(
    saver: BaseCheckpointSaver[Any], tup: CheckpointTuple | None
) -> CheckpointTuple | None:
    """The async twin of `_rebuilt`."""
    return None if tup is None else (await aload_rebuilt(saver, tup, None))[0]
