"""`undo_run` and its async twin: restore, append-only, what a repair run changed.

A rewind (`--rewind-unreadable`) is undone by copying the unreadable head's row,
as stored, on top of the rewind (`stores.rewind.RowCopy`): nothing is decoded. So is
a `type_moved` repair, whose source names a type that cannot be built here.

Each restore is a checkpoint on top of the run's repair, claimed and written as
a repair is (`stores.races`), so undos of one run at once restore each thread
once; an undo obeys a stop request and a write rate as a repair run does.
Pending writes a run rewrote in place (`stores.rewrites`) get their original bytes
back, each only while it still holds the bytes the run wrote, under the same lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decoding.strict import refusals
from ..delta import aload_rebuilt, is_snapshot, load_rebuilt, snapshot_value
from ..stores import Head, RepairEntry, astore_for, store_for
from ..stores.base import entry_from_metadata
from ..stores.faults import store_lost
from ..stores.formats import why_foreign
from ..stores.plan import DETAIL_KEY, NewCheckpoint, checkpoint_on_top, new_run_id, undo_detail
from ..stores.races import WriteOutcome, head_moved
from ..stores.rewind import RowCopy, undo_copy, undone_by_copy
from ..stores.rewrites import WriteRewrite, by_checkpoint
from ..targets.redact import first_line
from . import checks
from .pacing import Pacer
from .report import UndoReport, UnknownRun


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
    store = store_for(saver)
    undo = _Undo(run_id, stop, max_writes_per_second)
    entries = list(store.repairs_of(run_id))
    rewrites = store.rewrites_of(run_id)
    known_repairs(run_id, entries, rewrites)
    store.ready_to_write()
    store.begin_run(undo.report.run_id, "undo", {"undo_of": run_id})
    for entry in entries:
        if undo.stopping():
            break
        try:
            with refusals() as refused:
                head = store.load(_head(entry, entry.repair_checkpoint_id))
                current = store.head_id(entry.thread_id, entry.checkpoint_ns)
                if head is not None and undone_by_copy(head.metadata):
                    present = store.chain_link(_source_key(entry)) is not None
                    copy = _copying(store.rewinds, entry, head, current, present, undo.report)
                    if copy is not None and undo.pacer.wait():
                        undo.wrote(
                            entry, store.write_copy(undo.report.run_id, _planned(entry), copy)
                        )
                    continue
                source = _rebuilt(store.saver, store.load(_head(entry, entry.source_checkpoint_id)))
            types = store.row_types(entry.thread_id, entry.checkpoint_ns)
            found = (head, current, source)
            new = _restoring(store.saver, entry, found, types, undo.report, refused)
            if new is not None and undo.pacer.wait():
                undo.wrote(entry, store.write_undo(undo.report.run_id, _planned(entry), new))
        except Exception as error:
            if store_lost(error):  # every later thread would fail too, each after a wait
                raise
            undo.report.errors.append(_failure(entry, error))
    for writes in by_checkpoint(rewrites):
        if undo.stopping() or not undo.pacer.wait():
            break
        try:
            undo.restored(writes, store.restore_writes(writes))
        except Exception as error:
            if store_lost(error):
                raise
            undo.report.errors.append(_failure(writes[0], error))
    store.finish_run(undo.report.run_id, undo.report.to_json())
    return undo.report


async def aundo_run(
    saver: BaseCheckpointSaver[Any],
    run_id: str,
    *,
    stop: threading.Event | None = None,
    max_writes_per_second: float | None = None,
) -> UndoReport:
    """The async twin of `undo_run`."""
    checks.rate(max_writes_per_second)
    store = astore_for(saver)
    undo = _Undo(run_id, stop, max_writes_per_second)
    entries = [entry async for entry in store.repairs_of(run_id)]
    rewrites = await store.rewrites_of(run_id)
    known_repairs(run_id, entries, rewrites)
    await store.ready_to_write()
    await store.begin_run(undo.report.run_id, "undo", {"undo_of": run_id})
    for entry in entries:
        if undo.stopping():
            break
        try:
            with refusals() as refused:
                head = await store.load(_head(entry, entry.repair_checkpoint_id))
                current = await store.head_id(entry.thread_id, entry.checkpoint_ns)
                if head is not None and undone_by_copy(head.metadata):
                    present = await store.chain_link(_source_key(entry)) is not None
                    copy = _copying(store.rewinds, entry, head, current, present, undo.report)
                    if copy is not None and await undo.pacer.await_turn():
                        outcome = await store.write_copy(undo.report.run_id, _planned(entry), copy)
                        undo.wrote(entry, outcome)
                    continue
                source = await store.load(_head(entry, entry.source_checkpoint_id))
                source = await _arebuilt(store.saver, source)
            types = await store.row_types(entry.thread_id, entry.checkpoint_ns)
            found = (head, current, source)
            new = _restoring(store.saver, entry, found, types, undo.report, refused)
            if new is not None and await undo.pacer.await_turn():
                outcome = await store.write_undo(undo.report.run_id, _planned(entry), new)
                undo.wrote(entry, outcome)
        except Exception as error:
            if store_lost(error):  # every later thread would fail too, each after a wait
                raise
            undo.report.errors.append(_failure(entry, error))
    for writes in by_checkpoint(rewrites):
        if undo.stopping() or not await undo.pacer.await_turn():
            break
        try:
            undo.restored(writes, await store.restore_writes(writes))
        except Exception as error:
            if store_lost(error):
                raise
            undo.report.errors.append(_failure(writes[0], error))
    await store.finish_run(undo.report.run_id, undo.report.to_json())
    return undo.report


class _Undo:
    """State shared by the sync and async undo: its report, stop flag and write rate."""

    def __init__(self, run_id: str, stop: threading.Event | None, rate: float | None) -> None:
        self.report = UndoReport(new_run_id(), run_id)
        self.stop = stop or threading.Event()
        self.pacer = Pacer(rate, self.stop)

    def stopping(self) -> bool:
        """True (and the report says so) once the undo was asked to stop."""
        self.report.stopped = self.stop.is_set()
        return self.report.stopped

    def wrote(self, entry: RepairEntry, outcome: WriteOutcome) -> None:
        """Count what the restore turned out to be: only a restored head counts."""
        if outcome == "repaired":
            self.report.threads_restored += 1
        else:  # another undo restored it, or the application wrote meanwhile
            _skip(self.report, entry, outcome)

    def restored(self, writes: Sequence[WriteRewrite], outcomes: Sequence[str]) -> None:
        """Count one checkpoint's rewritten writes put back; each write left alone is
        listed with why (`stores.rewrites.restore_outcome`)."""
        restored = sum(outcome == "restored" for outcome in outcomes)
        self.report.writes_restored += restored
        if restored:
            self.report.threads_restored += 1
        else:
            self.report.threads_skipped += 1
        for write, outcome in zip(writes, outcomes, strict=True):
            if outcome != "restored":
                self.report.skipped.append(_write_skipped(write, outcome))


def _write_skipped(write: WriteRewrite, reason: str) -> dict[str, Any]:
    return {
        "thread_id": write.thread_id,
        "checkpoint_ns": write.checkpoint_ns,
        "task_id": write.task_id,
        "idx": write.idx,
        "reason": reason,
    }


def _planned(entry: RepairEntry) -> Head:
    """The head an undo is written on: the run's repair checkpoint."""
    return _head(entry, entry.repair_checkpoint_id)


def _source_key(entry: RepairEntry) -> tuple[str, str, str]:
    return (entry.thread_id, entry.checkpoint_ns, entry.source_checkpoint_id)


def _copying(
    copies_rows: bool,
    entry: RepairEntry,
    head: CheckpointTuple,
    current_head_id: str | None,
    source_present: bool,
    report: UndoReport,
) -> RowCopy | None:
    """The copy of the unreadable head a rewind passed over, on top of the rewind; None
    (and a reason in the report) when the thread must be left alone, as `_restoring`
    says, or when the store cannot copy a row as stored (`cannot_copy`)."""
    reason = _why_not_restore(report.undo_of, entry, head, head)
    copy = None
    if reason is None and not copies_rows:
        reason = "cannot_copy"
    elif reason is None:
        copy = undo_copy(head, report.run_id, report.undo_of)
        if copy is None or not source_present:
            reason = "source_missing"
        else:
            reason = head_moved(current_head_id, _planned(entry), copy)
    if reason is not None:
        _skip(report, entry, reason)
        return None
    return copy


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


def known_repairs(
    run_id: str, entries: Sequence[RepairEntry], rewrites: Sequence[WriteRewrite] = ()
) -> None:
    """Refuse, before any write, a run with no recorded repair (an unknown run id): no
    repair checkpoint and no write rewritten in place."""
    if not entries and not rewrites:
        raise UnknownRun(f"no repair recorded for run {run_id!r}: nothing to undo")


def _head(entry: RepairEntry, checkpoint_id: str) -> Head:
    return Head(entry.thread_id, entry.checkpoint_ns, checkpoint_id)


def _restoring(
    saver: BaseCheckpointSaver[Any],
    entry: RepairEntry,
    found: tuple[CheckpointTuple | None, str | None, CheckpointTuple | None],
    types: frozenset[str] | None,
    report: UndoReport,
    refused: set[str],
) -> NewCheckpoint | None:
    """A checkpoint on top of the repair that puts back the channels as they were
    before it; None (and a reason in the report) when the thread must be left alone:
    `claimed` when another undo of the run has already restored it, `refused_type`
    when its read refused a stored type (writing plain data back would change it),
    `foreign_format` when the saver would write a format the thread's rows (of
    serializer `types`) do not use. `found` is the repair checkpoint, the thread's
    current head id and the repair's source checkpoint."""
    head, current_head_id, source = found
    reason = _why_not_restore(report.undo_of, entry, head, source)
    if reason is None and refused:
        reason = "refused_type"
    detail = None
    if reason is None:
        assert head is not None
        detail = why_foreign(saver, head.checkpoint, types)
        reason = None if detail is None else "foreign_format"
    new = None
    if reason is None:
        assert head is not None and source is not None
        new = _restore(saver, head, source, report)
        reason = head_moved(current_head_id, _planned(entry), new)
    if reason is not None:
        _skip(report, entry, reason, detail)
        return None
    return new


def _restore(
    saver: BaseCheckpointSaver[Any],
    head: CheckpointTuple,
    source: CheckpointTuple,
    report: UndoReport,
) -> NewCheckpoint:
    detail: dict[str, Any] = head.metadata.get(DETAIL_KEY) or {}  # type: ignore[assignment]
    channels: Iterable[str] = detail.get("actions", {}).keys()
    shown = source.checkpoint["channel_values"]
    values = {name: snapshot_value(shown[name]) for name in channels if name in shown}
    written = head.checkpoint["channel_values"]
    snapshots = [name for name in values if is_snapshot(written.get(name))]
    undo = undo_detail(report.undo_of, head.checkpoint["id"])
    return checkpoint_on_top(head, values, saver.get_next_version, undo, report.run_id, snapshots)


def _why_not_restore(
    run_id: str,
    entry: RepairEntry,
    head: CheckpointTuple | None,
    source: CheckpointTuple | None,
) -> str | None:
    if head is None:  # the run stopped between its audit record and its write
        return "not_written"
    if entry_from_metadata(head, run_id) != entry:  # trust the checkpoint, not the listing
        return "not_this_run"
    return "source_missing" if source is None else None


def _skip(report: UndoReport, entry: RepairEntry, reason: str, detail: str | None = None) -> None:
    """Count a thread the undo leaves alone, and say why (`detail`: in a sentence)."""
    report.threads_skipped += 1
    skipped = {"thread_id": entry.thread_id, "checkpoint_ns": entry.checkpoint_ns}
    report.skipped.append({**skipped, "reason": reason, **({"detail": detail} if detail else {})})


def _failure(entry: RepairEntry | WriteRewrite, error: BaseException) -> dict[str, str]:
    return {
        "thread_id": entry.thread_id,
        "checkpoint_ns": entry.checkpoint_ns,
        "error": first_line(error),
    }
