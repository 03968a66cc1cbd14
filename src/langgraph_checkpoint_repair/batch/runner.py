"""`repair_threads` and its async twin (undo is in `undo`): thin I/O shells over the
stores and the pure rules in `stores.plan` and `options`."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decoding.integrity import Finding, StoredValue
from ..decoding.strict import refusals
from ..delta import aload_rebuilt, load_rebuilt
from ..engine.media.history import history_limits
from ..metrics import record_repairs, record_waiting
from ..stores import AsyncThreadStore, Head, ThreadStore, astore_for, store_for
from ..stores.faults import store_lost
from ..stores.formats import format_finding
from ..stores.plan import (
    Assessment,
    NewCheckpoint,
    assess,
    bytes_status,
    checkpoint_on_top,
    repair_detail,
    tuple_key,
    written_since,
)
from ..stores.races import WriteOutcome, head_moved
from ..stores.rewind import AncestorWalk, left_unreadable, rewind_assessment, rewind_checkpoint
from ..stores.rewrites import RewritePlan, nul_rewrites, stale_answer_drop
from ..targets.redact import first_line
from ..waiting import WaitingHead, age_bucket, waiting_head
from .answers import astale_found, may_drop_answer, stale_found, with_stale_answer
from .integrity import findings_of, moved_types_repair, needs_inspection, unreadable
from .options import (
    Decision,
    ProgressFn,
    RunOptions,
    ThreadFn,
    WaitingFn,
    outcome_before_writing,
)
from .pacing import Pacer, Quota
from .report import Outcome, RunReport, StoreLost, thread_order, waiting_order
from .rewind import Loaded, awalk_to_readable, walk_to_readable

logger = logging.getLogger("langgraph_checkpoint_repair.batch")


def repair_threads(
    saver: BaseCheckpointSaver[Any],
    options: RunOptions | None = None,
    *,
    command: str = "repair",
    on_progress: ProgressFn | None = None,
    on_thread: ThreadFn | None = None,
    on_waiting: WaitingFn | None = None,
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

    `on_thread` receives each head the report would list (`ThreadReport`) as soon as
    its page is done, in the order the store gave the heads; the report then keeps
    none in `threads`, so a run's memory stays flat however many heads are broken.
    With `waiting` set, `on_waiting` receives each head waiting on a human
    (`WaitingHead`) the same way, instead of the report's `waiting`.
    """
    options = options or RunOptions(**settings)
    store = store_for(saver)
    run = _SyncRun(store, options, command, (on_progress, on_thread, on_waiting), stop)
    return run.run()


async def arepair_threads(
    saver: BaseCheckpointSaver[Any],
    options: RunOptions | None = None,
    *,
    command: str = "repair",
    on_progress: ProgressFn | None = None,
    on_thread: ThreadFn | None = None,
    on_waiting: WaitingFn | None = None,
    stop: threading.Event | None = None,
    **settings: Any,
) -> RunReport:
    """The async twin of `repair_threads`."""
    options = options or RunOptions(**settings)
    store = astore_for(saver)
    run = _AsyncRun(store, options, command, (on_progress, on_thread, on_waiting), stop)
    return await run.run()


class _Run:
    """State shared by the sync and async runs."""

    def __init__(
        self,
        store: Any,
        options: RunOptions,
        command: str,
        callbacks: tuple[ProgressFn | None, ThreadFn | None, WaitingFn | None],
        stop: threading.Event | None,
    ) -> None:
        self.store = store
        self.options = options
        self.command = command
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
        """The place of each head of the page under way that is looked at in full."""
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

    def note_refused(self) -> None:
        """The stored types the store's serializer refused so far (a strict one keeps them)."""
        self.report.refused(getattr(self.store.saver.serde, "refused", ()))

    def hand_over(self) -> None:
        """Give `on_thread` the heads recorded since the last page, in the page's order
        (and `on_waiting` the heads found waiting)."""
        if self.on_waiting is not None:
            waiting = self.report.take_waiting()
            last = len(self.order)
            waiting.sort(key=lambda head: self.order.get(waiting_order(head), last))
            for head in waiting:
                self.on_waiting(head)
        if self.on_thread is None:
            return
        found = self.report.take_found()
        last = len(self.order)
        found.sort(key=lambda thread: self.order.get(thread_order(thread), last))
        for thread in found:
            self.on_thread(thread)

    def page_done(self) -> bool:
        """Hand over the page's heads and report progress; True when the run must end
        here (it was stopped)."""
        self.hand_over()
        report, wanted = self.report, self.options.channels
        report.stopped = self.stop.is_set()
        self.note_refused()
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

    def take_page(self, page: list[Head]) -> list[Head]:
        """The page's heads to load; those the first look cleared count as scanned now,
        the others as each is looked at (a run stopped mid-page counts only those)."""
        self.report.saw(name for head in page for name in head.channels)
        o = self.options
        to_load = page
        if not o.policy.reads_content or o.selection.token_budget is not None:
            # the first look knows pairing, and a budget's tokens, only
            to_load = [head for head in page if head.maybe_broken]
            self.report.scanned(len(page) - len(to_load))
        if self.on_thread is not None or self.on_waiting is not None:
            self.order = {(h.thread_id, h.checkpoint_ns): n for n, h in enumerate(page)}
        if o.waiting and self.store.lists_waiting:
            for head in page:
                self.note_waiting(head.waiting)
        return to_load

    def note_loaded(self, stored: CheckpointTuple) -> None:
        """A loaded head waiting on a human, where the first look did not list it."""
        if self.options.waiting and not self.store.lists_waiting:
            self.note_waiting(waiting_head(stored))

    def note_waiting(self, head: WaitingHead | None) -> None:
        """Count the head if it waits on a human, and list it if idle long enough."""
        if head is None:
            return
        idle = head.idle(self.options.started)
        listed = idle is None or idle >= self.options.idle
        self.report.waits(head, age_bucket(idle), listed)

    def waiting_measured(self) -> None:
        """After a whole run that looked for them, the waiting heads by age go to the
        metrics (`metrics.record_waiting`); a stopped run has not seen them all."""
        report = self.report
        if report.waiting_looked and not report.stopped:
            record_waiting(report.waiting_by_age, self.options.shard)

    def assess(self, tup: CheckpointTuple) -> Assessment:
        o = self.options
        values = tup.checkpoint["channel_values"]
        self.report.saw(c for c in o.channels if c in values)
        if o.policy.rewrites_content:
            for channel in o.channels:
                if isinstance(values.get(channel), list):
                    self.report.over_history_limits(
                        history_limits(values[channel], o.policy.provider)
                    )
        return assess(tup, channels=o.channels, policy=o.policy, min_idle=o.idle, now=o.started)

    def skip_refused(
        self, tup: CheckpointTuple, names: set[str], findings: tuple[Finding, ...]
    ) -> None:
        """Leave a head whose read refused a type or met a lost one: it holds plain data
        where the application stored an object, so writing on it would change the
        application's state. It is still assessed, to count it if broken."""
        try:
            assessment = self.assess(tup)
        except Exception:  # plain data where messages were: nothing more to say of it
            assessment = Assessment(*tuple_key(tup), status="clean", broken=False)
        self.report.record(replace(assessment, findings=findings), "refused_type")
        logger.info(
            "refused_type thread=%r ns=%r types=%s", *tuple_key(tup)[:2], ", ".join(sorted(names))
        )

    def unreadable(
        self, key: tuple[str, str, str], values: list[StoredValue] | None, error: Exception
    ) -> Assessment | None:
        """The assessment of a head whose bytes do not decode; None when the failure is
        not the bytes' and the run must report it as a failure."""
        serde, nul_matters = self.store.saver.serde, self.store.nul_matters
        assessment = unreadable(key, values, error, serde, nul_matters)
        if assessment is not None:
            logger.info("unreadable thread=%r ns=%r: %s", key[0], key[1], first_line(error))
        return assessment

    @property
    def rewinding(self) -> bool:
        """Whether unreadable heads are rewound: asked for, and the store can undo it."""
        return self.options.rewind_unreadable and self.store.rewinds

    def leave_unreadable(self, assessment: Assessment) -> None:
        self.report.record(assessment, "unreadable")

    def plan_rewind(
        self,
        found: Assessment,
        walk: AncestorWalk,
        loaded: Loaded | None,
        types: frozenset[str] | None,
    ) -> tuple[Assessment, NewCheckpoint] | None:
        """The rewind of an unreadable head to the ancestor the walk found; None (the
        head recorded, with why) when there is none or no write is due now. The rewind
        is written in the ancestor's format (`format_checked`, the thread's `types`)."""
        if loaded is None:
            self.leave_unreadable(left_unreadable(found, walk))
            return None
        ancestor, rebuilt = loaded
        assessment = rewind_assessment(found, walk, tuple_key(ancestor)[2])
        if assessment.status == "repair":
            assessment = self.format_checked(ancestor, assessment, types)
        if not self.due(assessment):
            return None
        saver, run_id = self.store.saver, self.options.run_id
        return assessment, rewind_checkpoint(
            walk, ancestor, saver.get_next_version, run_id, rebuilt
        )

    def judge(
        self,
        tup: CheckpointTuple,
        refused: set[str],
        values: list[StoredValue] | None,
    ) -> Assessment | None:
        """The assessment of a loaded head with its findings; None when it is left
        alone for a refused or lost type (recorded here)."""
        serde = self.store.saver.serde
        findings = findings_of(values, refused, serde, self.store.nul_matters)
        moved = self.moved_types_repair(tup, findings, values)
        if moved is not None:
            return moved
        if refused or any(finding.code == "lost_type" for finding in findings):
            self.skip_refused(tup, refused, findings)
            return None
        return replace(self.assess(tup), findings=findings)

    def moved_types_repair(
        self,
        tup: CheckpointTuple,
        findings: tuple[Finding, ...],
        values: list[StoredValue] | None,
    ) -> Assessment | None:
        """The head's `type_moved` repair, where `--type-moved` names every lost type."""
        o = self.options
        if not o.moved_types or values is None:
            return None
        status = bytes_status(tup, o.idle, o.started)
        return moved_types_repair(tup, findings, values, o.moved_types, status)

    def inspects(self, tup: CheckpointTuple, refused: set[str]) -> bool:
        """Whether the head's stored values are read: for an integrity finding, or for the
        row of a stale answer the run may delete."""
        if self.store.rewrites_writes and may_drop_answer(tup, self.options.policy):
            return True
        return needs_inspection(tup, refused, self.store.saver.serde, self.store.nul_matters)

    def format_checked(
        self, stored: CheckpointTuple, assessment: Assessment, types: frozenset[str] | None
    ) -> Assessment:
        """The assessment of a head to write on, left alone as `foreign_format` (with why,
        as a finding) where the write would not keep to the formats of the thread's
        rows, whose serializer types are `types` (None: a saver that shows no rows)."""
        finding = format_finding(self.store.saver, stored.checkpoint, types)
        if finding is None:
            return assessment
        logger.info("foreign_format thread=%r ns=%r: %s", *tuple_key(stored)[:2], finding.error)
        findings = (*assessment.findings, finding)
        return replace(assessment, status="foreign_format", findings=findings)

    def due(self, assessment: Assessment) -> bool:
        """Whether a write is due on the head now; if not, it is recorded with why."""
        outcome = outcome_before_writing(assessment, self.options.dry_run)
        if outcome is None:
            if assessment.findings:
                self.report.record(assessment, "reported")
            return False
        if outcome in ("repair", "would_repair") and not self.quota.take():
            outcome = "limit"  # over --limit: counted, left for the next run
        if outcome != "repair":
            self.report.record(assessment, outcome)
            return False
        return True

    def plan_write(self, tup: CheckpointTuple, assessment: Assessment) -> NewCheckpoint | None:
        """The repair checkpoint to write on `tup` (as stored), or None when the head
        needs no write now."""
        if not self.due(assessment):
            return None
        detail = repair_detail(assessment)
        saver, run_id = self.store.saver, self.options.run_id
        new = checkpoint_on_top(
            tup, assessment.repaired, saver.get_next_version, detail, run_id, assessment.snapshots
        )
        kept = {k: v for k, v in assessment.stored_as_is.items() if k not in assessment.repaired}
        new.checkpoint["channel_values"].update(kept)  # as stored, not as read
        return new

    def plan_rewrite(
        self, tup: CheckpointTuple, values: list[StoredValue] | None, assessment: Assessment
    ) -> RewritePlan | None:
        """The head's pending writes to change in place, where the store can: text
        holding U+0000 where the store refuses it (`docs/how-to/unreadable-threads.md`),
        else a stale answer to delete (`docs/how-to/resume-safely.md`); None when there
        is none."""
        if not self.store.rewrites_writes or values is None:
            return None
        codes = {finding.code for finding in assessment.findings}
        if "nul_text" in codes and self.store.nul_matters:
            serde, mode = self.store.saver.serde, self.options.policy.nul_text
            return nul_rewrites(tuple_key(tup), values, serde, mode)
        if "stale_resume" in codes and self.options.policy.stale_resume == "drop":
            return stale_answer_drop(tuple_key(tup), values)
        return None

    def rewrite_outcome(self, tup: CheckpointTuple) -> Decision:
        """`repair`, or what the rewrite is instead: `recent` (written within
        --min-idle), `would_repair` (a dry run), `limit` (over --limit)."""
        o = self.options
        if written_since(tup, o.started - o.idle):
            return "recent"
        if not self.quota.take():
            return "limit"
        return "would_repair" if o.dry_run else "repair"

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


class _SyncRun(_Run):
    store: ThreadStore

    def run(self) -> RunReport:
        try:
            return self.run_pages()
        except Exception as error:
            self.hand_over()  # what the page under way found is still handed over
            if store_lost(error):
                raise self.lost_store(error) from error
            raise

    def run_pages(self) -> RunReport:
        if not self.options.dry_run:
            self.store.ready_to_write()
            self.store.begin_run(self.options.run_id, self.command, self.options.arguments())
        with ThreadPoolExecutor(self.options.concurrency) as pool:
            for page in self.store.pages(self.options.selection):
                list(pool.map(self.process, self.take_page(page)))
                self.raise_if_lost()
                if self.page_done():
                    break
        self.note_refused()
        self.waiting_measured()
        if not self.options.dry_run:
            self.store.finish_run(self.options.run_id, self.report.to_json())
        return self.report

    def process(self, head: Head) -> None:
        if self.stop.is_set():
            return
        self.report.scanned(1)
        try:
            self.look_at(head)
        except Exception as error:
            self.failed(head, error)

    def look_at(self, head: Head) -> None:
        key = (head.thread_id, head.checkpoint_ns, head.checkpoint_id)
        found: Assessment | None = None
        with refusals() as refused:
            try:
                stored = self.store.load(head)
                if stored is None:
                    return
                tup, _ = load_rebuilt(self.store.saver, stored, self.options.channels)
            except Exception as error:
                values = None if store_lost(error) else self.store.stored_values(key)
                found = None if store_lost(error) else self.unreadable(key, values, error)
                if found is None:
                    raise
        if found is not None:
            self.rewind_or_leave(found)
            return
        assert stored is not None  # loaded in the try above
        self.note_loaded(stored)
        inspected = self.inspects(tup, refused)
        values = self.store.stored_values(tuple_key(stored)) if inspected else None
        assessment = self.judge(tup, refused, values)
        if assessment is None:
            return
        assessment = with_stale_answer(assessment, stale_found(self.store, stored))
        plan = self.plan_rewrite(stored, values, assessment)
        if plan is not None:
            self.rewrite(stored, assessment, plan)
            return
        if assessment.status == "repair":
            types = self.store.row_types(assessment.thread_id, assessment.checkpoint_ns)
            assessment = self.format_checked(stored, assessment, types)
        new = self.plan_write(stored, assessment)
        if new is not None:
            self.write(assessment, new)

    def rewrite(self, stored: CheckpointTuple, assessment: Assessment, plan: RewritePlan) -> None:
        outcome = self.rewrite_outcome(stored)
        if outcome == "repair":
            if not self.pacer.wait():
                return  # stopped while waiting for its turn: left for the next run
            outcome = self.store.rewrite_writes(self.options.run_id, plan)
        self.rewrote(assessment, plan, outcome)

    def rewind_or_leave(self, found: Assessment) -> None:
        """An unreadable head: rewound under `--rewind-unreadable`, else left alone."""
        if not self.rewinding:
            self.leave_unreadable(found)
            return
        key = (found.thread_id, found.checkpoint_ns, found.checkpoint_id)
        walk, loaded = walk_to_readable(self.store, key, self.options.channels)
        types = self.store.row_types(found.thread_id, found.checkpoint_ns)
        planned = self.plan_rewind(found, walk, loaded, types)
        if planned is not None:
            self.write(*planned)

    def write(self, assessment: Assessment, new: NewCheckpoint) -> None:
        current = self.store.head_id(assessment.thread_id, assessment.checkpoint_ns)
        moved = head_moved(current, assessment, new)  # before waiting for the pacer
        if moved is not None:
            self.left_alone(assessment, moved)
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
            self.hand_over()  # what the page under way found is still handed over
            if store_lost(error):
                raise self.lost_store(error) from error
            raise

    async def run_pages(self) -> RunReport:
        if not self.options.dry_run:
            await self.store.ready_to_write()
            await self.store.begin_run(self.options.run_id, self.command, self.options.arguments())
        gate = asyncio.Semaphore(self.options.concurrency)
        async for page in self.store.pages(self.options.selection):
            await asyncio.gather(*(self.process(head, gate) for head in self.take_page(page)))
            self.raise_if_lost()
            if self.page_done():
                break
        self.note_refused()
        self.waiting_measured()
        if not self.options.dry_run:
            await self.store.finish_run(self.options.run_id, self.report.to_json())
        return self.report

    async def process(self, head: Head, gate: asyncio.Semaphore) -> None:
        async with gate:
            if self.stop.is_set():
                return
            self.report.scanned(1)
            try:
                await self.look_at(head)
            except Exception as error:
                self.failed(head, error)

    async def look_at(self, head: Head) -> None:
        key = (head.thread_id, head.checkpoint_ns, head.checkpoint_id)
        found: Assessment | None = None
        with refusals() as refused:
            try:
                stored = await self.store.load(head)
                if stored is None:
                    return
                tup, _ = await aload_rebuilt(self.store.saver, stored, self.options.channels)
            except Exception as error:
                values = None if store_lost(error) else await self.store.stored_values(key)
                found = None if store_lost(error) else self.unreadable(key, values, error)
                if found is None:
                    raise
        if found is not None:
            await self.rewind_or_leave(found)
            return
        assert stored is not None  # loaded in the try above
        self.note_loaded(stored)
        inspected = self.inspects(tup, refused)
        values = await self.store.stored_values(tuple_key(stored)) if inspected else None
        assessment = self.judge(tup, refused, values)
        if assessment is None:
            return
        assessment = with_stale_answer(assessment, await astale_found(self.store, stored))
        plan = self.plan_rewrite(stored, values, assessment)
        if plan is not None:
            await self.rewrite(stored, assessment, plan)
            return
        if assessment.status == "repair":
            types = await self.store.row_types(assessment.thread_id, assessment.checkpoint_ns)
            assessment = self.format_checked(stored, assessment, types)
        new = self.plan_write(stored, assessment)
        if new is not None:
            await self.write(assessment, new)

    async def rewrite(
        self, stored: CheckpointTuple, assessment: Assessment, plan: RewritePlan
    ) -> None:
        outcome = self.rewrite_outcome(stored)
        if outcome == "repair":
            if not await self.pacer.await_turn():
                return  # stopped while waiting for its turn: left for the next run
            outcome = await self.store.rewrite_writes(self.options.run_id, plan)
        self.rewrote(assessment, plan, outcome)

    async def rewind_or_leave(self, found: Assessment) -> None:
        """The twin of `_SyncRun.rewind_or_leave`."""
        if not self.rewinding:
            self.leave_unreadable(found)
            return
        key = (found.thread_id, found.checkpoint_ns, found.checkpoint_id)
        walk, loaded = await awalk_to_readable(self.store, key, self.options.channels)
        types = await self.store.row_types(found.thread_id, found.checkpoint_ns)
        planned = self.plan_rewind(found, walk, loaded, types)
        if planned is not None:
            await self.write(*planned)

    async def write(self, assessment: Assessment, new: NewCheckpoint) -> None:
        current = await self.store.head_id(assessment.thread_id, assessment.checkpoint_ns)
        moved = head_moved(current, assessment, new)  # before waiting for the pacer
        if moved is not None:
            self.left_alone(assessment, moved)
            return
        if not await self.pacer.await_turn():
            return  # stopped while waiting for its turn: left for the next run
        outcome = await self.store.write_repair(self.options.run_id, assessment, new)
        self.wrote(assessment, new, outcome)


def migrate(saver: BaseCheckpointSaver[Any]) -> list[str] | None:
    """Apply the audit-table migrations the store still lacks; return their names.

    None when the store keeps its audit in checkpoint metadata (SQLite, any saver).
    """
    store = store_for(saver)
    apply: Any = getattr(store, "migrate", None)
    return None if apply is None else list(apply())
