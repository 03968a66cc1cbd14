"""What a run did, in the shape the CLI prints and `--json` emits."""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from ..codes import DIVERGENCE_CODES, DRIFT_CODES
from ..decisions.plan import Assessment
from ..engine import RepairAction
from ..redact import one_line
from ..stores.generic.listing import SaverListing
from ..waiting import WaitingHead

Outcome = Literal[
    "repaired",
    "would_repair",
    "in_flight",
    "recent",
    "moved_on",
    "claimed",
    "superseded",
    "limit",
    "refused_type",
    "unreadable",
    "foreign_format",
    "history_lost",
    "other_graph",
    "reported",
]
"""What became of a head that was not clean (`ThreadReport.outcome`): written, or left
alone and why; every outcome but the first two and `reported` counts under `skipped`."""


@dataclass
class ThreadReport:
    """One broken (thread, namespace) head and what happened to it."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    outcome: Outcome
    """repaired, would_repair, in_flight, recent, moved_on, claimed, superseded,
    refused_type (its read refused to build a stored type: never written on),
    unreadable (its stored bytes do not decode: never written on), history_lost (rows
    its history needs are gone: `delta_seed_missing` or `blob_missing`, never written
    on), other_graph (its
    metadata names another `graph_id` than the run's graph), reported (its
    history is clean; its findings are reported and nothing is written)."""
    actions: dict[str, list[str]]
    repair_checkpoint_id: str | None = None
    tokens: dict[str, dict[str, int]] | None = None
    """With a token budget: channel -> the history's tokens `before` and `after`."""
    findings: list[dict[str, Any]] | None = None
    """What is wrong with the head's stored bytes (`Finding.to_json`), where anything is."""
    rewind: dict[str, Any] | None = None
    """Under `--rewind-unreadable`, an unreadable head's `rewound_to` (the ancestor, or
    None with a `reason`) and `passed_over` (the checkpoints skipped, the head included)."""

    @classmethod
    def of(cls, assessment: Assessment, outcome: Outcome) -> ThreadReport:
        actions = {
            name: [action_label(a) for a in acts] for name, acts in assessment.actions.items()
        }
        tokens = {
            name: {"before": before, "after": after}
            for name, (before, after) in assessment.tokens.items()
        }
        return cls(
            assessment.thread_id,
            assessment.checkpoint_ns,
            assessment.checkpoint_id,
            outcome,
            actions,
            tokens=tokens or None,
            findings=[finding.to_json() for finding in assessment.findings] or None,
            rewind=dict(assessment.rewind) if assessment.rewind is not None else None,
        )

    @property
    def codes(self) -> list[str]:
        """Its stable codes: the action kinds, then the findings' codes."""
        kinds = {action.split(":", 1)[0] for acts in self.actions.values() for action in acts}
        found = {finding["code"] for finding in self.findings or ()}
        return sorted(kinds) + sorted(found - kinds)

    def to_json(self) -> dict[str, Any]:
        """Its fields; `tokens`, `findings` and `rewind` only where there are some."""
        fields = dict(vars(self))
        for optional in ("tokens", "findings", "rewind"):
            if fields[optional] is None:
                del fields[optional]
        return fields


REWRITE_KINDS = frozenset(
    {"nul_replaced", "nul_stripped", "resume_dropped", "interrupt_rekeyed", "message_id_stamped"}
)
"""Action kinds of pending writes rewritten in place (`decisions.rewrites`)."""


def action_label(action: RepairAction) -> str:
    """`kind:tool_call_id`; a rewritten write is named by its task and index instead, a
    rewind by the ancestor it went back to (`rewound:to ID, passing over N`), a
    re-target by its nodes (`node_renamed:OLD -> NEW`), a dropped key by its name, a
    seed proven wrong by its checkpoint and counts, a value materialized by its size."""
    if action.kind in REWRITE_KINDS:
        return f"{action.kind}:{action.detail}/{action.index}"
    if action.kind in (
        "rewound",
        "node_renamed",
        "channel_dropped",
        "materialized",
        *DIVERGENCE_CODES,
    ):
        return f"{action.kind}:{action.detail}"
    return f"{action.kind}:{action.tool_call_id}"


class UnknownRun(ValueError):
    """`undo` was given a run id with no recorded repair; nothing is written."""


class StoreLost(Exception):
    """The store went away mid-run (its connections ended, new ones refused): the run
    stopped there. The message is one line; `report` is what the run did until then."""

    def __init__(self, reason: str, report: RunReport) -> None:
        super().__init__(reason)
        self.report = report


@dataclass
class RunReport:
    """Counters of one `scan` or `repair` run; safe to update from worker threads."""

    run_id: str
    dry_run: bool
    threads_scanned: int = 0
    threads_needing_repair: int = 0
    threads_repaired: int = 0
    checkpoints_written: int = 0
    writes_rewritten: int = 0
    """Pending writes rewritten in place (`nul_text`) or deleted (a stale answer); no
    checkpoint is written for them."""
    skipped: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, str]] = field(default_factory=list)
    threads: list[ThreadReport] = field(default_factory=list)
    max_threads: int | None = None
    """At most this many `threads` kept, the first by (thread id, namespace); None: all."""
    threads_not_listed: int = 0
    """Broken heads counted above but left out of `threads` (over `max_threads`)."""
    streamed: bool = False
    """Each head is handed to the caller as its page ends (`take_found`) instead of kept
    in `threads`, so memory stays flat however many there are."""
    stopped: bool = False
    """The run was asked to stop (a signal) before it saw every thread."""
    channels_seen: set[str] = field(default_factory=set)
    channels_not_found: list[str] = field(default_factory=list)
    """Channels the run was told to repair that no scanned head holds (a typo, say)."""
    refused_types: set[str] = field(default_factory=set)
    """Stored types the strict serializer refused to build (module.Name)."""
    findings: Counter[str] = field(default_factory=Counter)
    """Heads with each integrity finding (nul_text, lost_type, undecodable), by code."""
    checkpoints_passed_over: int = 0
    """Checkpoints the run's rewinds passed over (`--rewind-unreadable`), heads included."""
    history_limits: Counter[str] = field(default_factory=Counter)
    """Threads over a request-wide media limit of the policy's provider, by code:
    measured, never fixed (no rule for them is prefix-stable)."""
    waiting_looked: bool = False
    """The run looked for heads waiting on a human (`RunOptions.waiting`)."""
    waiting_heads: int = 0
    """Heads with an open interrupt, idle at least `--min-idle` (or of unknown age)."""
    waiting_unchecked: int = 0
    """Heads whose bytes do not decode, where the run had to load a head to tell whether
    it waits on a human: they may, so a list of waiting heads is not whole."""
    waiting: list[WaitingHead] = field(default_factory=list)
    """Those heads, unless `waiting_streamed` hands each over as its page ends."""
    waiting_streamed: bool = False
    waiting_by_age: Counter[str] = field(default_factory=Counter)
    """Every head found waiting, whatever its age, by `waiting.age_bucket` (for metrics)."""
    _found: list[ThreadReport] = field(default_factory=list, repr=False, compare=False)
    """With `streamed`: the heads recorded since the last `take_found`."""
    _waiting_found: list[WaitingHead] = field(default_factory=list, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc), compare=False)
    """The run's start: the ages of waiting heads are taken at it."""
    listed_by_saver: SaverListing | None = None
    """What the saver's `list()` showed, where the run had only the saver's API."""

    def refused(self, names: Iterable[str]) -> None:
        with self._lock:
            self.refused_types.update(names)

    def over_history_limits(self, codes: Iterable[str]) -> None:
        with self._lock:
            self.history_limits.update(codes)

    def scanned(self, count: int) -> None:
        with self._lock:
            self.threads_scanned += count

    def record(
        self,
        assessment: Assessment,
        outcome: Outcome,
        written: str | None = None,
        rewritten: int = 0,
    ) -> None:
        """Count one assessed head that was not clean; `rewritten`: the head's pending
        writes a repair rewrites in place, instead of writing a checkpoint. A head needs
        repair when its history is broken or when the run has a repair for it, whatever
        it repairs (a stale answer, text holding U+0000, an unreadable head), or when
        the graph given would strand it (a rename repairs it): the heads counted
        repaired, or in `actions`, are always among those counted needing it."""
        with self._lock:
            repairing = outcome in ("repaired", "would_repair")
            stranded = any(finding.code in DRIFT_CODES for finding in assessment.findings)
            if assessment.broken or repairing or stranded or any(assessment.actions.values()):
                self.threads_needing_repair += 1
            self.findings.update({finding.code for finding in assessment.findings})
            if repairing:
                self.threads_repaired += 1
                self.writes_rewritten += rewritten
                self.checkpoints_written += 0 if rewritten else 1
                for actions in assessment.actions.values():
                    self.actions.update(a.kind for a in actions)
                if assessment.rewind is not None:
                    self.checkpoints_passed_over += int(assessment.rewind["passed_over"])
            elif outcome != "reported":
                self.skipped[outcome] += 1
                if written is not None:  # a repair an application write overtook
                    self.checkpoints_written += 1
            report = ThreadReport.of(assessment, outcome)
            report.repair_checkpoint_id = written
            self._keep(report)

    def _keep(self, report: ThreadReport) -> None:
        """Append, or with `max_threads` keep the first ones in order (memory stays flat);
        `streamed`, hold it only until it is handed over."""
        if self.streamed:
            self._found.append(report)
            return
        if self.max_threads is None:
            self.threads.append(report)
            return
        bisect.insort(self.threads, report, key=thread_order)
        if len(self.threads) > self.max_threads:
            self.threads.pop()
            self.threads_not_listed += 1

    def waits(self, head: WaitingHead, bucket: str, listed: bool) -> None:
        """Count a head waiting on a human; `listed` when it is idle long enough to list."""
        with self._lock:
            self.waiting_by_age[bucket] += 1
            if listed:
                self.waiting_heads += 1
                (self._waiting_found if self.waiting_streamed else self.waiting).append(head)

    def take_waiting(self) -> list[WaitingHead]:
        """The waiting heads listed since the last call (`waiting_streamed`)."""
        with self._lock:
            found, self._waiting_found = self._waiting_found, []
        return found

    def take_found(self) -> list[ThreadReport]:
        """The heads recorded since the last call (`streamed`), each handed over once."""
        with self._lock:
            found, self._found = self._found, []
        return found

    def saw(self, channels: Iterable[str]) -> None:
        with self._lock:
            self.channels_seen.update(channels)

    def waiting_not_told(self) -> None:
        with self._lock:
            self.waiting_unchecked += 1

    def failed(self, thread_id: str, checkpoint_ns: str, error: BaseException) -> None:
        with self._lock:
            self.errors.append(
                {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "error": one_line(error)}
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "dry_run": self.dry_run,
            "threads_scanned": self.threads_scanned,
            "threads_needing_repair": self.threads_needing_repair,
            "threads_repaired": self.threads_repaired,
            "checkpoints_written": self.checkpoints_written,
            "writes_rewritten": self.writes_rewritten,
            "skipped": dict(sorted(self.skipped.items())),
            "actions": dict(sorted(self.actions.items())),
            "errors": self.errors,
            "refused_types": sorted(self.refused_types),
            **({"findings": dict(sorted(self.findings.items()))} if self.findings else {}),
            **(
                {"checkpoints_passed_over": self.checkpoints_passed_over}
                if self.actions.get("rewound")
                else {}
            ),
            **({"channels_not_found": self.channels_not_found} if self.channels_not_found else {}),
            **(
                {"history_limits": dict(sorted(self.history_limits.items()))}
                if self.history_limits
                else {}
            ),
            **self.waiting_json(),
            **({"stopped": True} if self.stopped else {}),
            **self.listing_json(),
        }

    def listing_json(self) -> dict[str, Any]:
        listing = self.listed_by_saver
        return {} if listing is None else {"listed_by_saver": listing.to_json()}

    def waiting_json(self) -> dict[str, Any]:
        """`waiting_heads`, and the heads themselves unless they were handed over."""
        if not self.waiting_looked:
            return {}
        heads = sorted(self.waiting, key=thread_order)
        listed = {} if self.waiting_streamed else {"waiting": [h.to_json(self.now) for h in heads]}
        unchecked = {"waiting_unchecked": self.waiting_unchecked} if self.waiting_unchecked else {}
        return {"waiting_heads": self.waiting_heads, **unchecked, **listed}


def thread_order(report: ThreadReport | WaitingHead) -> tuple[str, str]:
    """The order heads are listed in (broken or waiting): by thread id, then namespace."""
    return (report.thread_id, report.checkpoint_ns)


@dataclass
class UndoReport:
    run_id: str
    undo_of: str
    threads_restored: int = 0
    threads_skipped: int = 0
    writes_restored: int = 0
    """Pending writes given back their original bytes (a run that rewrote them in place)."""
    skipped: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    stopped: bool = False
    """The undo was asked to stop (a signal) before it looked at every thread."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "undo_of": self.undo_of,
            "threads_restored": self.threads_restored,
            "threads_skipped": self.threads_skipped,
            "writes_restored": self.writes_restored,
            "skipped": self.skipped,
            "errors": self.errors,
            **({"stopped": True} if self.stopped else {}),
        }
