"""The progress display of `scan`, `repair` and `prune`: a Rich bar on a terminal,
nothing elsewhere.

With a total (PostgreSQL and SQLite count heads in one query), a bar with
done/total and the time left; without one (any other saver, whose heads are
only known once listed), a spinner with the count and the rate.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..batch import RunReport


class RunProgress:
    """Call it with the run's report after each page; use it as a context manager."""

    def __init__(self, verb: str, total: int | None, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal
        columns = _columns(total, repairing=verb == "repairing")
        self.progress = Progress(*columns, console=self.console, transient=False)
        self.task = self.progress.add_task(verb, total=total, broken=0, repaired=0)

    def __call__(self, report: RunReport) -> None:
        if self.enabled:
            self.progress.update(
                self.task,
                completed=report.threads_scanned,
                broken=report.threads_needing_repair,
                repaired=report.threads_repaired,
            )

    def __enter__(self) -> RunProgress:
        if self.enabled:
            self.progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.enabled:
            self.progress.stop()


def _columns(total: int | None, repairing: bool) -> list[ProgressColumn | str]:
    counts = "{task.fields[broken]:,} broken"
    if repairing:
        counts += ", {task.fields[repaired]:,} repaired"
    if total is not None:
        return [
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(separator="/"),
            TaskProgressColumn(),
            TextColumn(counts),
            TimeRemainingColumn(),
        ]
    return [
        SpinnerColumn(),
        TextColumn("{task.description} {task.completed:,} heads"),
        TaskProgressColumn(show_speed=True),
        TextColumn(counts),
        TimeElapsedColumn(),
    ]


class PruneProgress:
    """`prune`'s display: a spinner with the threads looked at and pruned, on a terminal.
    Call it with each thread's outcome; use it as a context manager."""

    def __init__(self, verb: str, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal
        columns = [
            SpinnerColumn(),
            TextColumn("{task.description} {task.completed:,} threads"),
            TaskProgressColumn(show_speed=True),
            TextColumn("{task.fields[pruned]:,} pruned"),
            TimeElapsedColumn(),
        ]
        self.progress = Progress(*columns, console=self.console, transient=False)
        self.task = self.progress.add_task(verb, total=None, pruned=0)
        self.pruned = 0

    def __call__(self, outcome: Any) -> None:
        """`outcome`: a thread's `ThreadPruned`, as `prune_threads` hands it over."""
        self.pruned += outcome.pruned
        if self.enabled:
            self.progress.update(self.task, advance=1, pruned=self.pruned)

    def __enter__(self) -> PruneProgress:
        if self.enabled:
            self.progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.enabled:
            self.progress.stop()
