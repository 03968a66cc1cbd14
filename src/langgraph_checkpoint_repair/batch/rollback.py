"""`rollback_runs`: runs of the application taken back out of a store.

The threads holding a checkpoint of the runs are found first; each is then rolled
back by its store's pruner on one snapshot (`retention.rollback` decides what goes),
archived like a prune unless told not to, so that `undo --run` puts it back. A thread
where a later run built on the run keeps the rows that run needs, and the report
counts it (`threads_built_on`). The wrapper's `adelete_for_runs` runs the same code,
with no record and no archive, as LangGraph's deletes keep none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from .. import metrics
from ..decisions.plan import new_run_id
from ..retention.outcome import ThreadPruned
from ..retention.rules import PruneRules
from ..stores.pruners import pruner_for
from .pruning import PruneReport
from .report import UnknownRun


@dataclass(frozen=True)
class Rollback:
    """A rollback's settings, checked once."""

    runs: frozenset[str]
    threads: Sequence[str] | None
    rules: PruneRules
    recorded: bool
    """A run of its own in the store's ledger (the command's; the wrapper's keeps none)."""
    stop: threading.Event | None
    on_thread: Callable[[ThreadPruned], Any] | None

    @property
    def listed(self) -> list[str]:
        return sorted(self.runs)

    def report(self) -> PruneReport:
        report = PruneReport(new_run_id(), self.rules.dry_run, self.writes_archive)
        report.rollback_of = self.listed
        return report

    @property
    def writes_archive(self) -> bool:
        return self.rules.archive and not self.rules.dry_run

    @property
    def records(self) -> bool:
        return self.recorded and not self.rules.dry_run

    def arguments(self) -> dict[str, Any]:
        return {"runs": self.listed, "threads": self.threads, "archive": self.rules.archive}

    def found(self, threads: list[str]) -> list[str]:
        """The threads to roll back; a run the command names and no thread holds is a
        mistake, said before anything is written."""
        if not threads and self.recorded:
            named = ", ".join(repr(run) for run in self.listed)
            raise UnknownRun(f"no checkpoint of run {named} in this store: nothing to roll back")
        return threads

    def add(self, report: PruneReport, outcome: ThreadPruned) -> None:
        report.add(outcome)
        if outcome.pruned and not self.rules.dry_run:
            metrics.record_pruned("batch" if self.recorded else "wrapper", outcome.deleted.rows)
        if self.on_thread is not None:
            self.on_thread(outcome)

    def stopping(self, report: PruneReport) -> bool:
        report.stopped = self.stop is not None and self.stop.is_set()
        return report.stopped


def _rollback(
    runs: Sequence[str],
    *,
    threads: Sequence[str] | None = None,
    dry_run: bool = False,
    archive: bool = True,
    recorded: bool = True,
    stop: threading.Event | None = None,
    on_thread: Callable[[ThreadPruned], Any] | None = None,
) -> Rollback:
    if isinstance(runs, str):
        raise TypeError("run_ids must be a sequence of run IDs, not a str")
    rules = PruneRules(dry_run=dry_run, archive=archive)
    named = frozenset(str(run) for run in runs)
    return Rollback(named, threads, rules, recorded, stop, on_thread)


def rollback_runs(
    saver: BaseCheckpointSaver[Any], runs: Sequence[str], **settings: Any
) -> PruneReport:
    """Take `runs` out of every thread holding a checkpoint of theirs (or of `threads`):
    each thread then reads as it did before them, unless a later run built on them.
    Settings: `threads`, `dry_run`, `archive`, `recorded`, `stop`, `on_thread`."""
    rollback = _rollback(runs, **settings)
    report = rollback.report()
    if not rollback.runs:
        return report
    pruner = pruner_for(saver)
    pruner.ready(archive=rollback.rules.archive, writes=not rollback.rules.dry_run,
                 recorded=rollback.recorded)  # fmt: skip
    threads = rollback.found(pruner.run_threads(rollback.listed, rollback.threads))
    if rollback.records:
        pruner.begin_run(report.run_id, rollback.arguments(), "rollback")
    for thread_id in threads:
        if rollback.stopping(report):
            break
        rolled = pruner.rollback_thread(report.run_id, thread_id, rollback.runs, rollback.rules)
        rollback.add(report, rolled)
    if rollback.records:
        pruner.finish_run(report.run_id, report.to_json())
    return report


async def arollback_runs(
    saver: BaseCheckpointSaver[Any], runs: Sequence[str], **settings: Any
) -> PruneReport:
    """The async twin of `rollback_runs`."""
    rollback = _rollback(runs, **settings)
    report = rollback.report()
    if not rollback.runs:
        return report
    pruner = pruner_for(saver, asynchronous=True)
    await pruner.ready(archive=rollback.rules.archive, writes=not rollback.rules.dry_run,
                       recorded=rollback.recorded)  # fmt: skip
    threads = rollback.found(await pruner.run_threads(rollback.listed, rollback.threads))
    if rollback.records:
        await pruner.begin_run(report.run_id, rollback.arguments(), "rollback")
    for thread_id in threads:
        if rollback.stopping(report):
            break
        rolled = await pruner.rollback_thread(
            report.run_id, thread_id, rollback.runs, rollback.rules
        )
        rollback.add(report, rolled)
    if rollback.records:
        await pruner.finish_run(report.run_id, report.to_json())
    return report
