"""One command on one target: open the saver as it must be opened, drive it through
the API it implements (a saver with only the async API, or whose sync methods
raise NotImplementedError, runs through the async batch functions), print the
result, and turn it into an exit code."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from argparse import Namespace
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TextIO

from .. import batch
from ..decoding.strict import StrictSerializer
from ..stores.generic.listing import capped_warning
from ..targets.opening import aopen_saver, open_saver
from ..targets.saver_api import ASYNC_API, SYNC_API, implements, refuses_sync
from .arguments import TABLE_ROWS
from .commands import COMMANDS, Entry
from .exits import EXIT_OK, EXIT_THREAD_FAILED
from .output import (
    WAITING_OPENING,
    JsonStream,
    ListStream,
    gate_verdict,
    print_json,
    print_summary,
    print_threads,
    print_types,
    print_undo,
    print_waiting,
    undo_shortfall,
    waiting_line,
    waiting_untold,
)
from .stopping import StopRequest

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from ..batch import RunOptions, RunReport, ThreadPreview, TypeInventory, UndoReport
    from ..batch.pruning import PruneUndoReport

NOTHING_TO_MIGRATE = "nothing to migrate: this store keeps its audit in checkpoint metadata\n"


def streamed_output(
    entry: Entry, args: Namespace, out: TextIO, now: datetime
) -> ListStream | JsonStream | None:
    """`scan --list` and `scan --json` write each broken head as the run finds it; with
    `--waiting`, each head waiting on a human instead."""
    if not entry.streams:
        return None
    if args.waiting:
        if args.list:
            return ListStream(out, lambda head: waiting_line(head, now))
        if args.json:
            return JsonStream(out, WAITING_OPENING, lambda head: head.to_json(now))
        return None
    if args.list:
        return ListStream(out)
    return JsonStream(out) if args.json else None


class Job:
    """The parsed command, its options, where it prints, and the stop request it obeys."""

    def __init__(
        self, args: Namespace, options: RunOptions | None, out: TextIO, stop: StopRequest
    ) -> None:
        self.args = args
        self.entry = COMMANDS[args.command]
        self.options = options
        self.out = out
        self.stop = stop
        self.serde = StrictSerializer(args.allowed_types)
        """How a store opened from a URL is read: only trusted types are built."""
        self.pruned = 0
        """Threads this job's prune has pruned so far (each in its own transaction)."""
        self.report: RunReport | None = None
        """The run's report as of its last finished page (for a failure mid-run)."""
        now = options.started if options is not None else datetime.now(timezone.utc)
        self.stream = streamed_output(self.entry, args, out, now)
        """Where `scan --list` and `scan --json` write each listed head as its page ends."""

    @property
    def written(self) -> int:
        """Repair checkpoints this job has written so far."""
        report = self.report
        return 0 if report is None or report.dry_run else report.checkpoints_written

    @property
    def done_so_far(self) -> str | None:
        """What the job has written so far, for a failure mid-run; None: nothing."""
        if self.pruned:
            return f"{self.pruned:,} threads pruned"
        return f"{self.written:,} repairs" if self.written else None

    @property
    def pool_size(self) -> int:
        return self.options.concurrency + 1 if self.options else 2

    @property
    def looks_only(self) -> bool:
        """scan, show and a dry run: the store is opened so that nothing can change it."""
        return self.entry.looks or bool(self.options and self.options.dry_run)

    def open_and_run(self) -> int:
        opened = open_saver(
            self.args.target,
            pool_size=self.pool_size,
            gentle=True,
            read_only=self.looks_only,
            serde=self.serde,
        )
        with opened as saver:
            try:
                if implements(saver, SYNC_API) and not refuses_sync(saver):
                    return self.run(saver)
                return asyncio.run(self.arun(saver))
            finally:
                self.warn_refused()

    async def aopen_and_run(self) -> int:
        opened = aopen_saver(
            self.args.target, pool_size=self.pool_size, read_only=self.looks_only, serde=self.serde
        )
        async with opened as saver:
            try:
                if implements(saver, ASYNC_API):
                    return await self.arun(saver)
                return self.run(saver)
            finally:
                self.warn_refused()

    @property
    def refused_types(self) -> list[str]:
        """The stored types the strict serializer refused to build, so far (none for a
        saver from `module:attr`, which keeps its own serializer)."""
        return sorted(self.serde.refused)

    def warn_refused(self) -> None:
        """Each refused type, named once on stderr."""
        for name in self.refused_types:
            module, _, attr = name.rpartition(".")
            if (module, attr) in self.serde.lost:
                print(
                    f"langgraph-repair: warning: lost type {module}:{attr}: allowed, but it "
                    "does not import here; heads holding it are left alone",
                    file=sys.stderr,
                )
                continue
            print(
                f"langgraph-repair: warning: refused type {name}: read as plain data; "
                f"heads holding it are left alone (trust it with --allow-type {module}:{attr})",
                file=sys.stderr,
            )

    def run(self, saver: BaseCheckpointSaver[Any]) -> int:
        entry = self.entry
        return entry.present(self, entry.call(self, saver))

    async def arun(self, saver: BaseCheckpointSaver[Any]) -> int:
        entry = self.entry
        return entry.present(self, await entry.acall(self, saver))

    def repair(self, saver: BaseCheckpointSaver[Any]) -> RunReport:
        """`scan` and `repair`: the run, with its progress bar and listings."""
        assert self.options is not None
        total = batch.count_heads(saver, self.options) if self.progress_shown else None
        with self.progress(total) as progress:
            return batch.repair_threads(saver, self.options, **self.run_settings(progress))

    async def arepair(self, saver: BaseCheckpointSaver[Any]) -> RunReport:
        """The async twin of `repair`."""
        assert self.options is not None
        total = await batch.acount_heads(saver, self.options) if self.progress_shown else None
        with self.progress(total) as progress:
            return await batch.arepair_threads(saver, self.options, **self.run_settings(progress))

    def undo(self, saver: BaseCheckpointSaver[Any]) -> UndoReport | PruneUndoReport:
        """A prune run's rows put back, or a repair run's threads restored."""
        from ..batch.pruning import undo_prune

        restored = undo_prune(saver, self.args.run)
        if restored is not None:
            return restored
        return batch.undo_run(saver, self.args.run, **self.undo_settings())

    async def aundo(self, saver: BaseCheckpointSaver[Any]) -> UndoReport | PruneUndoReport:
        """The async twin of `undo`."""
        from ..batch.pruning import aundo_prune

        restored = await aundo_prune(saver, self.args.run)
        if restored is not None:
            return restored
        return await batch.aundo_run(saver, self.args.run, **self.undo_settings())

    def show(self, saver: BaseCheckpointSaver[Any]) -> ThreadPreview:
        return batch.preview_thread(saver, self.args.thread, **self.show_settings())

    async def ashow(self, saver: BaseCheckpointSaver[Any]) -> ThreadPreview:
        return await batch.apreview_thread(saver, self.args.thread, **self.show_settings())

    def types(self, saver: BaseCheckpointSaver[Any]) -> TypeInventory:
        return batch.inventory_types(saver, **self.types_settings())

    async def atypes(self, saver: BaseCheckpointSaver[Any]) -> TypeInventory:
        return await batch.ainventory_types(saver, **self.types_settings())

    def migrate(self, saver: BaseCheckpointSaver[Any]) -> list[str] | None:
        return batch.migrate(saver)

    def run_settings(self, progress: Callable[[RunReport], Any]) -> dict[str, Any]:
        return {
            "command": self.args.command,
            "on_progress": self.watching(progress),
            **self.listeners(),
            "stop": self.stop.event,
        }

    @property
    def waiting_only(self) -> bool:
        """`scan --waiting`: the heads listed are those waiting on a human."""
        return bool(getattr(self.args, "waiting", False))

    def listeners(self) -> dict[str, Any]:
        """Where the run hands each listed head: broken heads, or with `--waiting` the
        heads waiting on a human (the broken ones are then only counted)."""
        if self.waiting_only:
            return {"on_thread": None, "on_waiting": self.stream}
        return {"on_thread": self.stream, "on_waiting": None}

    @property
    def progress_shown(self) -> bool:
        """A progress bar only on a terminal (the head count it needs is one query)."""
        return sys.stderr.isatty()

    def progress(self, total: int | None) -> AbstractContextManager[Callable[[RunReport], Any]]:
        """A bar on a terminal (Rich imported then), else nothing to draw."""
        assert self.options is not None
        if not self.progress_shown:
            return contextlib.nullcontext(_unseen)
        from .progress import RunProgress

        return RunProgress("scanning" if self.options.dry_run else "repairing", total)

    def undo_settings(self) -> dict[str, Any]:
        rate = self.args.max_writes_per_second
        return {"stop": self.stop.event, "max_writes_per_second": rate}

    def show_settings(self) -> dict[str, Any]:
        return {
            "checkpoint_ns": self.args.ns,
            "channel": self.args.channel,
            "policy": self.args.repair_policy,
            "graph": self.args.graph_shape,
        }

    def types_settings(self) -> dict[str, Any]:
        return {"all_checkpoints": self.args.all_checkpoints, "allowed": self.args.allowed_types}

    def listed(self, inventory: TypeInventory) -> int:
        if self.args.json:
            print_json(inventory.to_json(), self.out)
        else:
            print_types(inventory, self.out)
        return EXIT_OK

    def shown(self, preview: ThreadPreview) -> int:
        if self.args.json:
            print_json({**preview.to_json(), "refused_types": self.refused_types}, self.out)
        else:
            from rich.console import Console

            from .show import print_preview

            print_preview(preview, Console(file=self.out, highlight=False))
        return EXIT_OK

    def watching(self, progress: Callable[[RunReport], Any]) -> Any:
        """A progress callback that also keeps the latest report."""

        def on_progress(report: RunReport) -> None:
            self.report = report
            progress(report)
            if self.stream is not None:
                self.out.flush()  # the page's lines go out now, not when a buffer fills

        return on_progress

    def finished(self, report: RunReport) -> int:
        self.report = report
        self.print_report(report)
        # A run with --graph or --interrupt-ids and no --channel is about the graph or the
        # ids, not about messages.
        about_others = any(getattr(self.args, name, None) for name in ("graph", "interrupt_ids"))
        asked = self.args.channel is not None or not about_others
        for channel in report.channels_not_found if asked else ():
            print(
                f"langgraph-repair: warning: no scanned thread has a channel named {channel!r}",
                file=sys.stderr,
            )
        closed = self.gate_closed(report)
        if closed:
            print(f"langgraph-repair: {gate_verdict(report)}", file=sys.stderr)
        untold = self.waiting_only and report.waiting_unchecked
        if untold:
            print(f"langgraph-repair: {waiting_untold(report)}", file=sys.stderr)
        listing = report.listed_by_saver
        capped = listing is not None and listing.may_be_capped
        if listing is not None and capped:  # threads past a cap were never seen: no all-clear
            print(f"langgraph-repair: warning: {capped_warning(listing)}", file=sys.stderr)
        failed = bool(report.errors) or closed or bool(untold) or capped
        return self.exit_code(report.stopped, failed)

    def gate_closed(self, report: RunReport) -> bool:
        """Whether `scan --graph`, the gate before a deploy, found threads the graph would
        strand, or heads it could not check: then it exits 1, as a run with a failure does."""
        from ..codes import GATE_CODES

        stranded = any(report.findings.get(code) for code in GATE_CODES)
        missed = report.findings.get("interrupt_id_mismatch")
        gated = self.args.graph is not None and stranded
        ids_gated = getattr(self.args, "interrupt_ids", None) is not None and bool(missed)
        return self.entry.looks and (gated or ids_gated)

    def exit_code(self, stopped: bool, failed: bool) -> int:
        """130 / 143 for a run a signal stopped (saying so on stderr), else 1 or 0."""
        if stopped and self.stop.exit_code is not None:
            print(
                f"langgraph-repair: stopped by {self.stop.name}; run the command again to finish",
                file=sys.stderr,
            )
            return self.stop.exit_code
        return EXIT_THREAD_FAILED if failed else EXIT_OK

    def print_report(self, report: RunReport) -> None:
        """The table and summary, or the JSON line: of a run, or of what a failed run did."""
        if self.stream is not None:
            self.stream.end(report)
        elif self.args.json:
            print_json(report.to_json(), self.out)
        elif self.waiting_only:
            print_waiting(report, self.out, TABLE_ROWS)
            print_summary(report, self.out, self.entry.title, self.entry.writes)
        else:
            print_threads(report, self.out)
            print_summary(report, self.out, self.entry.title, self.entry.writes)

    def end_stream(self) -> None:
        """A listing under way when the run failed ends as the docs promise: the lines so
        far, or one JSON object whose summary says the run stopped short."""
        if self.stream is None or not self.stream.started or self.stream.ended:
            return
        if self.report is not None:
            self.report.stopped = True
        self.stream.end(self.report)

    def undone(self, undo: UndoReport | PruneUndoReport) -> int:
        """The report; exit 1 when the undo left a thread it should have restored (for a
        reason other than the application's own write), saying why on stderr."""
        if not isinstance(undo, batch.UndoReport):
            from .retention import print_prune_undo

            return print_prune_undo(self, undo)
        if self.args.json:
            print_json(undo.to_json(), self.out)
        else:
            print_undo(undo, self.out)
        shortfall = undo_shortfall(undo)
        if shortfall:
            print(f"langgraph-repair: {shortfall}", file=sys.stderr)
        return self.exit_code(undo.stopped, bool(undo.errors) or bool(shortfall))

    def migrated(self, applied: list[str] | None) -> int:
        if self.args.json:
            print_json({"applied": applied or [], "audit_tables": applied is not None}, self.out)
        elif applied is None:
            self.out.write(NOTHING_TO_MIGRATE)
        else:
            self.out.write(f"applied: {', '.join(applied)}\n" if applied else "up to date\n")
        return EXIT_OK


def _unseen(report: RunReport) -> None:
    """The progress of a run whose stderr is not a terminal: nothing is drawn."""
