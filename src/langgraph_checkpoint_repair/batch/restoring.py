"""The undo's bookkeeping, apart from its I/O and its rules: its report, stop flag and
write rate, and the heads it reads. What it decides for each thread is
`decisions.undo_plans`'; the sync and async shells in `undo` read and write.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from ..decisions.plan import NewCheckpoint, new_run_id
from ..decisions.races import WriteOutcome
from ..decisions.rewind import RowCopy
from ..decisions.rewrites import WriteRewrite
from ..decisions.undo_plans import RepairEntry, Skip, Undoing, repair_at
from ..drift.writing import moved_back
from ..redact import one_line
from ..stores import Head
from ..stores.faults import store_lost
from .pacing import Pacer
from .report import UndoReport, UnknownRun

_Plan = TypeVar("_Plan", NewCheckpoint, RowCopy)


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

    @property
    def undoing(self) -> Undoing:
        """The undo as its plans see it; work a repair moved goes back by `drift`'s rule."""
        return Undoing(self.report.run_id, self.report.undo_of, moved_back)

    def planned(self, entry: RepairEntry, plan: _Plan | Skip) -> _Plan | None:
        """The plan to write, or None when the thread is left alone (and the report
        says why)."""
        if isinstance(plan, Skip):
            skip(self.report, entry, plan.reason, plan.detail)
            return None
        return plan

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
    return Head(*repair_at(entry))


def source_key(entry: RepairEntry) -> tuple[str, str, str]:
    return (entry.thread_id, entry.checkpoint_ns, entry.source_checkpoint_id)


def head_at(entry: RepairEntry, checkpoint_id: str) -> Head:
    return Head(entry.thread_id, entry.checkpoint_ns, checkpoint_id)


def known_repairs(
    run_id: str, entries: Sequence[RepairEntry], rewrites: Sequence[WriteRewrite] = ()
) -> None:
    """Refuse, before any write, a run with no recorded repair (an unknown run id): no
    repair checkpoint and no write rewritten in place."""
    if not entries and not rewrites:
        raise UnknownRun(f"no repair recorded for run {run_id!r}: nothing to undo")


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
