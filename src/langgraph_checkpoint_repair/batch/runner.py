"""`repair_threads` and its async twin (undo is in `undo`): thin I/O shells that load
each head and write what is due, over the run's `ledger` (its report and promises),
its `judging` (what a loaded head is) and its `planning` (what to write on it)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decisions.plan import Assessment, NewCheckpoint
from ..decisions.races import head_moved
from ..decisions.rewrites import RewritePlan
from ..decoding.strict import refusals
from ..delta.channels import Rebuilt
from ..delta.proof import Proof
from ..stores import AsyncThreadStore, Head, ThreadStore, astore_for, store_for
from ..stores.faults import store_lost
from ..stores.history import aread_proofs, aread_rebuilt, read_proofs, read_rebuilt
from .ancestors import awalk_to_readable, walk_to_readable
from .id_rows import achain_rows, chain_rows, given_ids, stamping
from .judging import Judge
from .ledger import Callbacks, Ledger
from .materializing import names_to_read
from .options import ProgressFn, RunOptions, ThreadFn, WaitingFn
from .planning import Planner
from .report import RunReport
from .stale import astale_found, stale_found

logger = logging.getLogger("langgraph_checkpoint_repair.batch")


class Read(NamedTuple):
    """A head as a run reads it: as stored, with its delta channels rebuilt
    (`loaded`), those whose seeds its rows prove wrong, and the types its read refused."""

    stored: CheckpointTuple
    loaded: Rebuilt
    proven: dict[str, Proof]
    refused: set[str]


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

    `settings` are `RunOptions` fields (`dry_run`, `min_idle`, `limit`, `policy`, ...).
    Setting `stop` (from a signal handler, say) ends the run early: writes under way
    finish, none starts, and the report so far is returned with `stopped` set. A store
    that goes away mid-run raises `StoreLost` at once, with the report so far.

    `on_thread` receives each head the report would list (`ThreadReport`) as soon as
    its page is done, in the store's order; the report then keeps none in `threads`,
    so memory stays flat however many heads are broken. With `waiting`, `on_waiting`
    receives each head waiting on a human (`WaitingHead`) the same way.
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
    """What the sync and async runs share: the ledger, the judge and the planner."""

    def __init__(
        self,
        store: Any,
        options: RunOptions,
        command: str,
        callbacks: Callbacks,
        stop: threading.Event | None,
    ) -> None:
        self.store = store
        self.options = options
        self.command = command
        self.ledger = Ledger(options, callbacks, stop)
        self.judge = Judge(store, options, self.ledger)
        self.plan = Planner(store, options, self.ledger)

    def channels_of(self, stored: CheckpointTuple) -> Collection[str]:
        """The channels read at a head: the run's, and for `materialize` every delta
        channel the head shows."""
        o = self.options
        return names_to_read(stored, o.channels) if o.materialize else o.channels

    @property
    def every(self) -> bool:
        """Whether every delta seed is proven, not only the empty and flattened ones:
        asked for, or before `materialize` writes a value down for good."""
        return self.options.prove_history or self.options.materialize

    def materialized(self, head: Head, read: Read) -> Assessment | None:
        """What `materialize` writes on a head read; None when it is left alone for a
        refused type or a lost history (recorded, with why)."""
        self.judge.note_channels(read.loaded.tup)
        if read.refused:
            self.judge.skip_refused(read.stored, read.refused, ())
            return None
        assessment = self.plan.materialized(read.stored, read.loaded, read.proven)
        return None if self.judge.leaves_lost_history(head, assessment) else assessment


class _SyncRun(_Run):
    store: ThreadStore

    def run(self) -> RunReport:
        with self.ledger.ending(), ThreadPoolExecutor(self.options.concurrency) as pool:
            if not self.options.dry_run:
                self.store.ready_to_write(self.plan.changes)
                self.store.begin_run(self.options.run_id, self.command, self.options.arguments())
            for page in self.store.pages(self.options.selection):
                list(pool.map(self.process, self.judge.take_page(page)))
                self.ledger.raise_if_lost()
                if self.ledger.page_done(self.store.saver.serde):
                    break
            self.ledger.report.listed_by_saver = self.store.listing
            self.ledger.finished(self.store.saver.serde)
            if not self.options.dry_run:
                self.store.finish_run(self.options.run_id, self.ledger.report.to_json())
            return self.ledger.report

    def process(self, head: Head) -> None:
        if self.ledger.stop.is_set():
            return
        self.ledger.report.scanned(1)
        try:
            self.look_at(head)
        except Exception as error:
            self.ledger.failed(head, error)

    def look_at(self, head: Head) -> None:
        if self.options.materialize:
            self.materialize(head)
            return
        if (seen := self.judge.stale_by_look(head)) is not None:
            if (plan := self.plan.seen_stale(seen, head)) is not None:
                self.rewrite(head.stale_since, seen, plan)
            return
        if (read := self.read(head)) is None:
            return
        stored, loaded, proven, refused = read
        key, tup = head.key, loaded.tup
        if self.judge.of_other_graph(stored):
            return
        self.judge.note_loaded(stored)
        rekeys = self.judge.rekeys(stored)
        inspected = self.judge.inspects(head, tup, refused, bool(rekeys))
        rows = self.store.stored_values(key) if inspected else head.writes
        seeded = given_ids(self.store, stored, loaded, self.options.channels)
        assessment = self.judge.assessment(tup, refused, rows, proven, seeded)
        if assessment is None or self.judge.leaves_lost_history(head, assessment):
            return
        assessment = assessment.with_findings(stale_found(self.store, stored))
        assessment = self.judge.with_interrupt_ids(stored, assessment)
        assessment = self.judge.with_drift(stored, assessment)
        if (fix := self.plan.drift_fix(assessment)) is not None:
            types = self.store.row_types(assessment.thread_id, assessment.checkpoint_ns)
            if (planned := self.plan.retarget(stored, assessment, fix, types)) is not None:
                self.write(*planned)
            return
        stamps = chain_rows(self.store, stored, stamping(self.store, assessment))
        plan = self.plan.rewrite(key, rows, assessment, rekeys, stamps)
        if plan is not None:
            self.rewrite(stored.checkpoint.get("ts"), assessment, plan)
            return
        self.write_checked(stored, assessment)

    def write_checked(self, stored: CheckpointTuple, assessment: Assessment) -> None:
        """Write the checkpoint the assessment asks for on the head, in the formats of the
        thread's rows (else it is left as `foreign_format`), where one is due now."""
        if assessment.status == "repair":
            types = self.store.row_types(assessment.thread_id, assessment.checkpoint_ns)
            assessment = self.plan.format_checked(stored, assessment, types)
        new = self.plan.write(stored, assessment)
        if new is not None:
            self.write(assessment, new)

    def read(self, head: Head) -> Read | None:
        """The head loaded with its delta channels rebuilt and proven; None when it is
        gone, or does not decode (then rewound or left alone, as the run says)."""
        found = None
        with refusals() as refused:
            try:
                stored = self.store.load(head)
                if stored is None:
                    return None
                channels = self.channels_of(stored)
                loaded = read_rebuilt(self.store.saver, stored, channels)
                proven = read_proofs(self.store.saver, stored, channels, loaded, self.every)
            except Exception as error:
                if store_lost(error):
                    raise
                values = self.store.stored_values(head.key)
                if (found := self.judge.unreadable(head.key, values, error)) is None:
                    raise
        if found is not None:
            self.rewind_or_leave(found)
            return None
        assert stored is not None  # loaded in the try above
        return Read(stored, loaded, proven, refused)

    def materialize(self, head: Head) -> None:
        """`materialize`'s look at a head: its delta channels' values written into a new
        head as plain values (`batch.materializing`), or why not."""
        if (read := self.read(head)) is None:
            return
        if (assessment := self.materialized(head, read)) is not None:
            self.write_checked(read.stored, assessment)

    def rewrite(self, written: Any, assessment: Assessment, plan: RewritePlan) -> None:
        outcome = self.plan.rewrite_outcome(written)
        if outcome == "repair":
            if not self.ledger.pacer.wait():
                return  # stopped while waiting for its turn: left for the next run
            outcome = self.store.rewrite_writes(self.options.run_id, plan)
        self.ledger.rewrote(assessment, plan, outcome)

    def rewind_or_leave(self, found: Assessment) -> None:
        """An unreadable head: rewound under `--rewind-unreadable`, else left alone."""
        if not self.plan.rewinding:
            self.plan.leave_unreadable(found)
            return
        key = (found.thread_id, found.checkpoint_ns, found.checkpoint_id)
        walk, loaded = walk_to_readable(self.store, key, self.options.channels)
        types = self.store.row_types(found.thread_id, found.checkpoint_ns)
        planned = self.plan.rewind(found, walk, loaded, types)
        if planned is not None:
            self.write(*planned)

    def write(self, assessment: Assessment, new: NewCheckpoint) -> None:
        current = self.store.head_id(assessment.thread_id, assessment.checkpoint_ns)
        moved = head_moved(current, assessment, new)  # before waiting for the pacer
        if moved is not None:
            self.ledger.left_alone(assessment, moved)
            return
        if not self.ledger.pacer.wait():
            return  # stopped while waiting for its turn: left for the next run
        self.ledger.wrote(
            assessment, new, self.store.write_repair(self.options.run_id, assessment, new)
        )


class _AsyncRun(_Run):
    store: AsyncThreadStore

    async def run(self) -> RunReport:
        with self.ledger.ending():
            o, gate = self.options, asyncio.Semaphore(self.options.concurrency)
            if not o.dry_run:
                await self.store.ready_to_write(self.plan.changes)
                await self.store.begin_run(o.run_id, self.command, o.arguments())
            async for page in self.store.pages(o.selection):
                await asyncio.gather(
                    *(self.process(head, gate) for head in self.judge.take_page(page))
                )
                self.ledger.raise_if_lost()
                if self.ledger.page_done(self.store.saver.serde):
                    break
            self.ledger.report.listed_by_saver = self.store.listing
            self.ledger.finished(self.store.saver.serde)
            if not o.dry_run:
                await self.store.finish_run(o.run_id, self.ledger.report.to_json())
            return self.ledger.report

    async def process(self, head: Head, gate: asyncio.Semaphore) -> None:
        async with gate:
            if self.ledger.stop.is_set():
                return
            self.ledger.report.scanned(1)
            try:
                await self.look_at(head)
            except Exception as error:
                self.ledger.failed(head, error)

    async def look_at(self, head: Head) -> None:
        if self.options.materialize:
            await self.materialize(head)
            return
        if (seen := self.judge.stale_by_look(head)) is not None:
            if (plan := self.plan.seen_stale(seen, head)) is not None:
                await self.rewrite(head.stale_since, seen, plan)
            return
        if (read := await self.read(head)) is None:
            return
        stored, loaded, proven, refused = read
        key, tup = head.key, loaded.tup
        if self.judge.of_other_graph(stored):
            return
        self.judge.note_loaded(stored)
        rekeys = self.judge.rekeys(stored)
        inspected = self.judge.inspects(head, tup, refused, bool(rekeys))
        rows = await self.store.stored_values(key) if inspected else head.writes
        seeded = given_ids(self.store, stored, loaded, self.options.channels)
        assessment = self.judge.assessment(tup, refused, rows, proven, seeded)
        if assessment is None or self.judge.leaves_lost_history(head, assessment):
            return
        assessment = assessment.with_findings(await astale_found(self.store, stored))
        assessment = self.judge.with_interrupt_ids(stored, assessment)
        assessment = self.judge.with_drift(stored, assessment)
        if (fix := self.plan.drift_fix(assessment)) is not None:
            ns = assessment.checkpoint_ns
            types = await self.store.row_types(assessment.thread_id, ns)
            if (planned := self.plan.retarget(stored, assessment, fix, types)) is not None:
                await self.write(*planned)
            return
        stamps = await achain_rows(self.store, stored, stamping(self.store, assessment))
        plan = self.plan.rewrite(key, rows, assessment, rekeys, stamps)
        if plan is not None:
            await self.rewrite(stored.checkpoint.get("ts"), assessment, plan)
            return
        await self.write_checked(stored, assessment)

    async def write_checked(self, stored: CheckpointTuple, assessment: Assessment) -> None:
        """The twin of `_SyncRun.write_checked`."""
        if assessment.status == "repair":
            types = await self.store.row_types(assessment.thread_id, assessment.checkpoint_ns)
            assessment = self.plan.format_checked(stored, assessment, types)
        new = self.plan.write(stored, assessment)
        if new is not None:
            await self.write(assessment, new)

    async def read(self, head: Head) -> Read | None:
        """The twin of `_SyncRun.read`."""
        found = None
        with refusals() as refused:
            try:
                stored = await self.store.load(head)
                if stored is None:
                    return None
                channels = self.channels_of(stored)
                loaded = await aread_rebuilt(self.store.saver, stored, channels)
                proven = await aread_proofs(self.store.saver, stored, channels, loaded, self.every)
            except Exception as error:
                if store_lost(error):
                    raise
                values = await self.store.stored_values(head.key)
                if (found := self.judge.unreadable(head.key, values, error)) is None:
                    raise
        if found is not None:
            await self.rewind_or_leave(found)
            return None
        assert stored is not None  # loaded in the try above
        return Read(stored, loaded, proven, refused)

    async def materialize(self, head: Head) -> None:
        """The twin of `_SyncRun.materialize`."""
        if (read := await self.read(head)) is None:
            return
        if (assessment := self.materialized(head, read)) is not None:
            await self.write_checked(read.stored, assessment)

    async def rewrite(self, written: Any, assessment: Assessment, plan: RewritePlan) -> None:
        outcome = self.plan.rewrite_outcome(written)
        if outcome == "repair":
            if not await self.ledger.pacer.await_turn():
                return  # stopped while waiting for its turn: left for the next run
            outcome = await self.store.rewrite_writes(self.options.run_id, plan)
        self.ledger.rewrote(assessment, plan, outcome)

    async def rewind_or_leave(self, found: Assessment) -> None:
        """The twin of `_SyncRun.rewind_or_leave`."""
        if not self.plan.rewinding:
            self.plan.leave_unreadable(found)
            return
        key = (found.thread_id, found.checkpoint_ns, found.checkpoint_id)
        walk, loaded = await awalk_to_readable(self.store, key, self.options.channels)
        types = await self.store.row_types(found.thread_id, found.checkpoint_ns)
        planned = self.plan.rewind(found, walk, loaded, types)
        if planned is not None:
            await self.write(*planned)

    async def write(self, assessment: Assessment, new: NewCheckpoint) -> None:
        current = await self.store.head_id(assessment.thread_id, assessment.checkpoint_ns)
        moved = head_moved(current, assessment, new)  # before waiting for the pacer
        if moved is not None:
            self.ledger.left_alone(assessment, moved)
            return
        if not await self.ledger.pacer.await_turn():
            return  # stopped while waiting for its turn: left for the next run
        outcome = await self.store.write_repair(self.options.run_id, assessment, new)
        self.ledger.wrote(assessment, new, outcome)


def migrate(saver: BaseCheckpointSaver[Any]) -> list[str] | None:
    """Apply the audit-table migrations the store still lacks; return their names.

    None when the store keeps its audit in checkpoint metadata (SQLite, any saver).
    """
    store = store_for(saver)
    apply: Any = getattr(store, "migrate", None)
    return None if apply is None else list(apply())


def count_heads(saver: BaseCheckpointSaver[Any], options: RunOptions) -> int | None:
    """The number of (thread, namespace) heads `options` selects; None when unknown
    without listing the store (any saver but PostgreSQL and SQLite)."""
    return store_for(saver).count_heads(options.selection)


async def acount_heads(saver: BaseCheckpointSaver[Any], options: RunOptions) -> int | None:
    """The async twin of `count_heads`."""
    return await astore_for(saver).count_heads(options.selection)
