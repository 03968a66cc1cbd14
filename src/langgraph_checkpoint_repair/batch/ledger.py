"""What a batch run keeps while it goes: its report, the heads it hands over page by
page, its quota under `--limit`, its pacing, its stop request and the failure that
showed its store is gone. The runner's bookkeeping, apart from judging and writing."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from ..decisions.plan import Assessment, NewCheckpoint
from ..decisions.races import WriteOutcome
from ..decisions.rewrites import RewritePlan
from ..metrics import record_repairs, record_waiting
from ..redact import one_line
from ..stores import Head
from ..stores.faults import named_cause, store_lost
from ..waiting import WaitingHead, age_bucket
from .options import ProgressFn, RunOptions, ThreadFn, WaitingFn
from .pacing import Pacer, Quota
from .report import Outcome, RunReport, StoreLost, thread_order

logger = logging.getLogger("langgraph_checkpoint_repair.batch")

Callbacks = tuple[ProgressFn | None, ThreadFn | None, WaitingFn | None]
"""`on_progress`, `on_thread` and `on_waiting` (`runner.repair_threads`)."""


class Ledger:
    """The run's report and what it promised its caller, safe to use from workers."""

    def __init__(
        self, options: RunOptions, callbacks: Callbacks, stop: threading.Event | None
    ) -> None:
        self.options = options
        on_progress, self.on_thread, self.on_waiting = callbacks
        self.on_progress = on_progress or (lambda report: None)
        self.report = RunReport(
            options.run_id,
            options.dry_run,
            max_threads=options.max_reported_threads,
            streamed=self.on_thread is not None,
            waiting_looked=options.waiting,
            waiting_streamed=self.on_waiting is not None,
            now=options.started,
        )
        self.order: dict[tuple[str, str], int] = {}
        """The place of each head of the page under way, for the order of hand-overs."""
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

    @contextlib.contextmanager
    def ending(self) -> Iterator[None]:
        """Around a whole run: a failure still hands over what the page under way found,
        and one that shows the store is gone becomes `StoreLost`, with the report."""
        try:
            yield
        except Exception as error:
            self.hand_over()
            if store_lost(error):
                raise self.lost_store(error) from error
            raise

    def lost_store(self, error: Exception) -> StoreLost:
        """The run's end when its store went away: the reason, one line (for a pool that
        gave up waiting, what its connections met), and the report."""
        self.report.stopped = True
        return StoreLost(one_line(named_cause(error)), self.report)

    def note_refused(self, serde: object) -> None:
        """The stored types the store's serializer refused so far (a strict one keeps them)."""
        self.report.refused(getattr(serde, "refused", ()))

    def page_started(self, page: list[Head]) -> None:
        """Remember the page's order, which hand-overs keep."""
        if self.on_thread is not None or self.on_waiting is not None:
            self.order = {(h.thread_id, h.checkpoint_ns): n for n, h in enumerate(page)}

    def hand_over(self) -> None:
        """Give `on_thread` the heads recorded since the last page, in the page's order
        (and `on_waiting` the heads found waiting)."""
        if self.on_waiting is not None:
            self._in_page_order(self.report.take_waiting(), self.on_waiting)
        if self.on_thread is not None:
            self._in_page_order(self.report.take_found(), self.on_thread)

    def _in_page_order(self, heads: Sequence[Any], receive: Callable[[Any], None]) -> None:
        """Hand each of `heads` to `receive`, in the order the store gave the page."""
        last = len(self.order)
        for head in sorted(heads, key=lambda head: self.order.get(thread_order(head), last)):
            receive(head)

    def page_done(self, serde: object) -> bool:
        """Hand over the page's heads and report progress; True when the run must end
        here (it was stopped)."""
        self.hand_over()
        self.note_refused(serde)
        report, wanted = self.report, self.options.channels
        report.stopped = self.stop.is_set()
        if report.threads_scanned and not report.stopped:
            report.channels_not_found = [c for c in wanted if c not in report.channels_seen]
        self.on_progress(report)
        return report.stopped

    def left_alone(self, assessment: Assessment, outcome: WriteOutcome) -> None:
        """A head found claimed or moved on at the last look: nothing written, so its
        place under --limit goes to the next broken head."""
        self.quota.give_back()
        self.report.record(assessment, outcome)

    def wrote(self, assessment: Assessment, new: NewCheckpoint, outcome: WriteOutcome) -> None:
        """Report what a write turned out to be: only a repaired head counts as repaired,
        in the report and in the metrics (a dry run, which writes nothing, counts none)."""
        if outcome in ("claimed", "moved_on"):
            self.left_alone(assessment, outcome)
            return
        if outcome != "repaired":
            written = new.checkpoint_id if outcome == "superseded" else None
            self.report.record(assessment, outcome, written)
            logger.info(
                "%s thread=%r ns=%r", outcome, assessment.thread_id, assessment.checkpoint_ns
            )
            return
        self.report.record(assessment, "repaired", new.checkpoint_id)
        record_repairs("batch", assessment.actions)
        logger.info(
            "repaired thread=%r ns=%r checkpoint=%r -> %r actions=%s",
            assessment.thread_id,
            assessment.checkpoint_ns,
            assessment.checkpoint_id,
            new.checkpoint_id,
            {name: [a.kind for a in acts] for name, acts in assessment.actions.items()},
        )

    def rewrote(self, assessment: Assessment, plan: RewritePlan, outcome: Outcome) -> None:
        """Report a head whose writes were (or would be) rewritten, or why not. Its
        history, if broken too, stays as it is: its pending writes make it in flight."""
        shown = replace(assessment, actions=plan.actions())
        if outcome in ("claimed", "moved_on"):
            self.quota.give_back()  # nothing written: as `left_alone`
        self.report.record(shown, outcome, rewritten=len(plan.writes))
        if outcome == "repaired":
            record_repairs("batch", shown.actions)
            logger.info(
                "rewrote thread=%r ns=%r checkpoint=%r writes=%d (%s)",
                plan.thread_id,
                plan.checkpoint_ns,
                plan.checkpoint_id,
                len(plan.writes),
                plan.kind,
            )

    def note_waiting(self, head: WaitingHead | None) -> None:
        """Count the head if it waits on a human, and list it if idle long enough."""
        if head is None:
            return
        idle = head.idle(self.options.started)
        listed = idle is None or idle >= self.options.idle
        self.report.waits(head, age_bucket(idle), listed)

    def finished(self, serde: object) -> None:
        """The run's last page is done: its refused types, and its waiting heads' gauge."""
        self.note_refused(serde)
        self.waiting_measured()

    def waiting_measured(self) -> None:
        """After a whole run that looked for them, the waiting heads by age go to the
        metrics (`metrics.record_waiting`); a stopped run has not seen them all."""
        report = self.report
        if report.waiting_looked and not report.stopped:
            record_waiting(report.waiting_by_age, self.options.shard)
