"""What `undo` decides, apart from its I/O: for each thread a run repaired, whether it
is put back and how (a checkpoint restoring the channels as they were, or a copy of
the row a rewind passed over), or why it is left alone; and the undo's report. The
sync and async shells in `undo` read and write; this holds no I/O.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decisions.plan import DETAIL_KEY, NewCheckpoint, checkpoint_on_top, new_run_id, undo_detail
from ..decisions.races import WriteOutcome, head_moved
from ..decisions.rewind import RowCopy, undo_copy
from ..decisions.rewrites import WriteRewrite
from ..delta import is_snapshot, snapshot_value
from ..drift.writing import is_retarget, undo_retarget
from ..redact import one_line
from ..stores import Head, RepairEntry
from ..stores.base import entry_from_metadata
from ..stores.faults import store_lost
from ..stores.formats import why_foreign
from .pacing import Pacer
from .report import UndoReport, UnknownRun


class UndoLedger:
    """State shared by the sync and async undo: its report, stop flag and write rate."""

    def __init__(self, run_id: str, stop: threading.Event | None, rate: float | None) -> None:
        self.report = UndoReport(new_run_id(), run_id)
        self.stop = stop or threading.Event()
        self.pacer = Pacer(rate, self.stop)

    @contextlib.contextmanager
    def each(self, failing: RepairEntry | WriteRewrite) -> Iterator[None]:
        """Around the undo of one thread (or of one checkpoint's writes): a failure is
        reported and the undo goes on, unless the store is gone (every later thread
        would fail too, each after a wait)."""
        try:
            yield
        except Exception as error:
            if store_lost(error):
                raise
            self.report.errors.append(failure(failing, error))

    def stopping(self) -> bool:
        """True (and the report says so) once the undo was asked to stop."""
        self.report.stopped = self.stop.is_set()
        return self.report.stopped

    def wrote(self, entry: RepairEntry, outcome: WriteOutcome) -> None:
        """Count what the restore turned out to be: only a restored head counts."""
        if outcome == "repaired":
            self.report.threads_restored += 1
        else:  # another undo restored it, or the application wrote meanwhile
            skip(self.report, entry, outcome)

    def restored(self, writes: Sequence[WriteRewrite], outcomes: Sequence[str]) -> None:
        """Count one checkpoint's rewritten writes put back; each write left alone is
        listed with why (`decisions.rewrites.restore_outcome`)."""
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


def planned_head(entry: RepairEntry) -> Head:
    """The head an undo is written on: the run's repair checkpoint."""
    return head_at(entry, entry.repair_checkpoint_id)


def source_key(entry: RepairEntry) -> tuple[str, str, str]:
    return (entry.thread_id, entry.checkpoint_ns, entry.source_checkpoint_id)


def copy_plan(
    copies_rows: bool,
    entry: RepairEntry,
    head: CheckpointTuple,
    current_head_id: str | None,
    source_present: bool,
    report: UndoReport,
) -> RowCopy | None:
    """The copy of the unreadable head a rewind passed over, on top of the rewind; None
    (and a reason in the report) when the thread must be left alone, as `restore_plan`
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
            reason = head_moved(current_head_id, planned_head(entry), copy)
    if reason is not None:
        skip(report, entry, reason)
        return None
    return copy


def known_repairs(
    run_id: str, entries: Sequence[RepairEntry], rewrites: Sequence[WriteRewrite] = ()
) -> None:
    """Refuse, before any write, a run with no recorded repair (an unknown run id): no
    repair checkpoint and no write rewritten in place."""
    if not entries and not rewrites:
        raise UnknownRun(f"no repair recorded for run {run_id!r}: nothing to undo")


def head_at(entry: RepairEntry, checkpoint_id: str) -> Head:
    return Head(entry.thread_id, entry.checkpoint_ns, checkpoint_id)


def restore_plan(
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
        restored = _restore(saver, head, source, report)
        if isinstance(restored, str):
            reason, detail = "cannot_move_back", restored
        else:
            new = restored
            reason = head_moved(current_head_id, planned_head(entry), new)
    if reason is not None:
        skip(report, entry, reason, detail)
        return None
    return new


def _restore(
    saver: BaseCheckpointSaver[Any],
    head: CheckpointTuple,
    source: CheckpointTuple,
    report: UndoReport,
) -> NewCheckpoint | str:
    """The undo checkpoint; for a re-targeting, a sentence where the work cannot move back."""
    undo = undo_detail(report.undo_of, head.checkpoint["id"])
    if is_retarget(head.metadata):
        return undo_retarget(head, source, saver.get_next_version, undo, report.run_id)
    detail: dict[str, Any] = head.metadata.get(DETAIL_KEY) or {}  # type: ignore[assignment]
    channels: Iterable[str] = detail.get("actions", {}).keys()
    shown = source.checkpoint["channel_values"]
    values = {name: snapshot_value(shown[name]) for name in channels if name in shown}
    written = head.checkpoint["channel_values"]
    snapshots = [name for name in values if is_snapshot(written.get(name))]
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


def skip(report: UndoReport, entry: RepairEntry, reason: str, detail: str | None = None) -> None:
    """Count a thread the undo leaves alone, and say why (`detail`: in a sentence)."""
    report.threads_skipped += 1
    skipped = {"thread_id": entry.thread_id, "checkpoint_ns": entry.checkpoint_ns}
    report.skipped.append({**skipped, "reason": reason, **({"detail": detail} if detail else {})})


def failure(entry: RepairEntry | WriteRewrite, error: BaseException) -> dict[str, str]:
    return {
        "thread_id": entry.thread_id,
        "checkpoint_ns": entry.checkpoint_ns,
        "error": one_line(error),
    }
