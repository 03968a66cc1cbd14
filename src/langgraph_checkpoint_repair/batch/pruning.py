"""`prune_threads`, `undo_prune` and `forget_run`: retention over a whole store.

A prune walks the store's threads page by page and hands each to its store's pruner,
which plans on one snapshot of the thread (`retention.keep`) and deletes in one
transaction, archiving what it deletes unless told not to. The report adds up what
each thread says; a stop request ends the run between threads.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from .. import metrics
from ..decisions.plan import new_run_id, shard_of
from ..drift.shape import GraphShape, as_shape
from ..retention.outcome import Deleted, ThreadPruned
from ..retention.rules import PruneRules
from ..stores.pruners import pruner_for
from . import checks
from .compaction import acompact_thread, compact_thread
from .report import UnknownRun


@dataclass
class PruneReport:
    """What a prune did (or, in a dry run, would do), with counters that add up:
    every thread scanned is pruned, unchanged or skipped for one reason. It keeps no
    thread ids (`on_thread` hands each thread's outcome over), so a run's memory stays
    flat whatever the store's size."""

    run_id: str
    dry_run: bool
    archived: bool
    threads_scanned: int = 0
    threads_pruned: int = 0
    threads_deleted: int = 0
    """Of the threads pruned, those deleted whole (`delete_idle`)."""
    threads_compacted: int = 0
    """Threads given a snapshot under a head (`compact`; in a dry run, that would be)."""
    deleted: Deleted = field(default_factory=Deleted)
    skipped: Counter[str] = field(default_factory=Counter)
    compactable: int = 0
    """Checkpoints the threads skipped as `delta_chain` keep only for their delta
    chains: what `--compact` would free."""
    stopped: bool = False
    vacuumed: bool = False
    """The file was rewritten without its free pages afterwards (`vacuum`)."""
    rollback_of: list[str] | None = None
    """For a rollback: the application's runs it takes back (`batch.rollback`)."""
    threads_built_on: int = 0
    """For a rollback: threads where a later run's checkpoints need some of the run's."""

    def add(self, outcome: ThreadPruned) -> None:
        self.threads_scanned += 1
        self.threads_built_on += outcome.built_on > 0
        self.compactable += outcome.freeable
        if outcome.skipped is not None:
            self.skipped[outcome.skipped] += 1
        elif outcome.pruned:
            self.threads_pruned += 1
            self.threads_deleted += outcome.whole
            self.deleted.merge(outcome.deleted)

    def to_json(self) -> dict[str, Any]:
        rows = self.deleted.rows
        return {
            "run_id": self.run_id,
            "dry_run": self.dry_run,
            "archived": self.archived,
            "threads_scanned": self.threads_scanned,
            "threads_pruned": self.threads_pruned,
            "threads_deleted": self.threads_deleted,
            "threads_compacted": self.threads_compacted,
            "checkpoints_deleted": rows["checkpoints"],
            "writes_deleted": rows["writes"],
            "blobs_deleted": rows["blobs"],
            "bytes_freed": dict(self.deleted.bytes),
            "skipped": dict(sorted(self.skipped.items())),
            **({"compactable_checkpoints": self.compactable} if self.compactable else {}),
            "stopped": self.stopped,
            "vacuumed": self.vacuumed,
            **(self._rolled_back() if self.rollback_of is not None else {}),
        }

    def _rolled_back(self) -> dict[str, Any]:
        return {"rollback_of": self.rollback_of, "threads_built_on": self.threads_built_on}


@dataclass
class PruneUndoReport:
    """What `undo` of a prune put back."""

    run_id: str
    threads_restored: int = 0
    restored: Deleted = field(default_factory=Deleted)

    def add(self, restored: Deleted) -> None:
        self.restored.merge(restored)
        self.threads_restored += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "undo_of": self.run_id,
            "threads_restored": self.threads_restored,
            "rows_restored": dict(self.restored.rows),
        }


@dataclass(frozen=True)
class PruneRun:
    """A prune's settings, checked once, and where it reports."""

    rules: PruneRules
    threads: Sequence[str] | None
    shard: tuple[int, int] | None
    limit: int | None
    stop: threading.Event | None
    on_thread: Callable[[ThreadPruned], Any] | None
    arguments: dict[str, Any]
    vacuum: bool
    """Give the freed pages back to the file system afterwards (SQLite's VACUUM)."""
    graph: GraphShape | None = None
    """The application's graph: its reducers rebuild, for a compaction's snapshot, the
    delta channels that do not hold messages (a deep agent's `files`)."""

    def stopping(self, report: PruneReport) -> bool:
        """Whether the run ends before its next thread (stopped, or its limit reached)."""
        if self.stop is not None and self.stop.is_set():
            report.stopped = True
            return True
        return self.limit is not None and report.threads_pruned >= self.limit

    def takes(self, thread_id: str) -> bool:
        """Whether the thread is in this run's shard (every thread without one)."""
        return self.shard is None or shard_of(thread_id, self.shard[1]) == self.shard[0]

    def add(self, report: PruneReport, outcome: ThreadPruned) -> None:
        report.add(outcome)
        if outcome.pruned and not self.rules.dry_run:
            metrics.record_pruned("batch", outcome.deleted.rows)
        if self.on_thread is not None:
            self.on_thread(outcome)


def _run(
    keep_last: int = 1,
    min_idle: timedelta = timedelta(minutes=10),
    dry_run: bool = False,
    archive: bool = True,
    delete_idle: timedelta | None = None,
    include_waiting: bool = False,
    threads: Sequence[str] | None = None,
    shard: tuple[int, int] | None = None,
    limit: int | None = None,
    stop: threading.Event | None = None,
    on_thread: Callable[[ThreadPruned], Any] | None = None,
    arguments: dict[str, Any] | None = None,
    vacuum: bool = False,
    compact: bool = False,
    graph: Any = None,
) -> tuple[PruneRun, PruneReport]:
    checks.shard(shard)
    now = datetime.now(timezone.utc)
    recent_after = now - checks.idle_time(min_idle, now)
    idle_before = None if delete_idle is None else now - checks.idle_time(delete_idle, now)
    shape = None if graph is None else as_shape(graph)
    rules = PruneRules(
        keep_last, recent_after, dry_run, archive, idle_before, include_waiting, compact
    )
    settings = {
        **(arguments or {}),
        "keep_last": keep_last,
        "archive": archive,
        "delete_idle": None if delete_idle is None else str(delete_idle),
        "include_waiting": include_waiting,
        "compact": compact,
        "graph": graph is not None,
        "shard": None if shard is None else f"{shard[0]}/{shard[1]}",
    }
    run = PruneRun(rules, threads, shard, limit, stop, on_thread, settings, vacuum, shape)
    return run, PruneReport(new_run_id(), dry_run, archive and not dry_run)


def prune_threads(saver: BaseCheckpointSaver[Any], **settings: Any) -> PruneReport:
    """Prune every thread of the store (or `threads`): each namespace keeps its head and
    what it needs (`retention.keep`), the `keep_last` newest along its chain; threads
    written within `min_idle` are left to the application. With `delete_idle`, a thread
    none of whose heads was written within it is deleted whole, unless it waits on a
    human (`include_waiting` deletes those too). With `compact`, a delta thread first gets
    a snapshot under each head (`retention.compact`), so it keeps at most two checkpoints
    per namespace; `graph` (the application's compiled graph or `StateGraph`) lends its
    reducers to the delta channels that do not hold messages. Settings: `keep_last`,
    `min_idle`, `dry_run`, `archive`, `delete_idle`, `include_waiting`, `compact`,
    `graph`, `threads`, `shard`, `limit`, `stop`, `on_thread`, `vacuum`."""
    run, report = _run(**settings)
    pruner = pruner_for(saver)
    refuse_vacuum(pruner, run)
    pruner.ready(archive=run.rules.archive, writes=not run.rules.dry_run, compact=run.rules.compact)
    if not report.dry_run:
        pruner.begin_run(report.run_id, run.arguments)
    threads = itertools.chain.from_iterable(pruner.thread_pages(run.threads))
    for thread_id in filter(run.takes, threads):
        if run.stopping(report):
            break
        run.add(report, prune_one(saver, pruner, report, thread_id, run.rules, run.graph))
    if not report.dry_run:
        pruner.finish_run(report.run_id, report.to_json())
        if run.vacuum:
            pruner.vacuum()
            report.vacuumed = True
    return report


async def aprune_threads(saver: BaseCheckpointSaver[Any], **settings: Any) -> PruneReport:
    """The async twin of `prune_threads`."""
    run, report = _run(**settings)
    pruner = pruner_for(saver, asynchronous=True)
    refuse_vacuum(pruner, run)
    await pruner.ready(
        archive=run.rules.archive, writes=not run.rules.dry_run, compact=run.rules.compact
    )
    if not report.dry_run:
        await pruner.begin_run(report.run_id, run.arguments)
    async for thread_id in _each(pruner.thread_pages(run.threads)):
        if not run.takes(thread_id):
            continue
        if run.stopping(report):
            break
        run.add(report, await aprune_one(saver, pruner, report, thread_id, run.rules, run.graph))
    if not report.dry_run:
        await pruner.finish_run(report.run_id, report.to_json())
        if run.vacuum:
            await pruner.vacuum()
            report.vacuumed = True
    return report


def prune_one(
    saver: BaseCheckpointSaver[Any],
    pruner: Any,
    report: PruneReport,
    thread_id: str,
    rules: PruneRules,
    graph: GraphShape | None = None,
) -> ThreadPruned:
    """One thread: compacted first (`compact`, with `graph`'s reducers), then pruned."""
    if not rules.compact:
        plain: ThreadPruned = pruner.prune_thread(report.run_id, thread_id, rules)
        return plain
    compacted = compact_thread(saver, pruner, report.run_id, thread_id, rules, graph)
    if isinstance(compacted, ThreadPruned):
        return compacted
    report.threads_compacted += bool(compacted.namespaces)
    return compacted.outcome(
        pruner.prune_thread(report.run_id, thread_id, compacted.rules_for(rules))
    )


async def aprune_one(
    saver: BaseCheckpointSaver[Any],
    pruner: Any,
    report: PruneReport,
    thread_id: str,
    rules: PruneRules,
    graph: GraphShape | None = None,
) -> ThreadPruned:
    """The async twin of `prune_one`."""
    if not rules.compact:
        plain: ThreadPruned = await pruner.prune_thread(report.run_id, thread_id, rules)
        return plain
    compacted = await acompact_thread(saver, pruner, report.run_id, thread_id, rules, graph)
    if isinstance(compacted, ThreadPruned):
        return compacted
    report.threads_compacted += bool(compacted.namespaces)
    pruned = await pruner.prune_thread(report.run_id, thread_id, compacted.rules_for(rules))
    return compacted.outcome(pruned)


NO_VACUUM = (
    "--vacuum gives a SQLite file's freed pages back; on PostgreSQL, run VACUUM FULL on "
    "checkpoints, checkpoint_blobs and checkpoint_writes (it locks each table)"
)


def refuse_vacuum(pruner: Any, run: PruneRun) -> None:
    """A vacuum asked of a store that has none is refused before anything is deleted."""
    if run.vacuum and not pruner.vacuums:
        raise ValueError(NO_VACUUM)


async def _each(pages: AsyncIterator[list[str]]) -> AsyncIterator[str]:
    async for page in pages:
        for thread_id in page:
            yield thread_id


def undo_prune(saver: BaseCheckpointSaver[Any], run_id: str) -> PruneUndoReport | None:
    """Put back every row a prune run deleted, byte for byte, parent pointers included;
    None when `run_id` is no prune run of this store (an undo of a repair, then)."""
    pruner: Any = pruner_for(saver, required=False)
    threads = None if pruner is None else pruner.pruned_threads(run_id)
    if threads is None:
        return None
    pruner.ready_to_restore(pruner.restore_needs(run_id))
    report = PruneUndoReport(run_id)
    for thread_id in threads:
        report.add(pruner.restore_thread(run_id, thread_id))
    return report


async def aundo_prune(saver: BaseCheckpointSaver[Any], run_id: str) -> PruneUndoReport | None:
    """The async twin of `undo_prune`."""
    pruner: Any = pruner_for(saver, required=False, asynchronous=True)
    threads = None if pruner is None else await pruner.pruned_threads(run_id)
    if threads is None:
        return None
    await pruner.ready_to_restore(await pruner.restore_needs(run_id))
    report = PruneUndoReport(run_id)
    for thread_id in threads:
        report.add(await pruner.restore_thread(run_id, thread_id))
    return report


def forget_run(saver: BaseCheckpointSaver[Any], run_id: str) -> int:
    """Drop a prune run's archive: its undo is no longer possible. The rows dropped."""
    pruner = pruner_for(saver)
    if pruner.pruned_threads(run_id) is None:
        raise UnknownRun(f"no prune run {run_id!r} in this store")
    pruner.ready_to_restore(pruner.forget_needs)
    return int(pruner.forget(run_id))


async def aforget_run(saver: BaseCheckpointSaver[Any], run_id: str) -> int:
    """The async twin of `forget_run`."""
    pruner = pruner_for(saver, asynchronous=True)
    if await pruner.pruned_threads(run_id) is None:
        raise UnknownRun(f"no prune run {run_id!r} in this store")
    await pruner.ready_to_restore(pruner.forget_needs)
    return int(await pruner.forget(run_id))
