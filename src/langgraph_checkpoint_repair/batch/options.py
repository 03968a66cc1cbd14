"""The settings of one batch run, and the pure rules that turn an assessment into an outcome."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from ..codes import InterruptIds
from ..decisions.plan import Assessment, new_run_id
from ..decoding.names import TypeName, type_text
from ..decoding.rename import moved_from
from ..drift.shape import GraphShape, as_shape, checked_renames
from ..engine import RepairPolicy
from ..engine.context import without_budget
from ..engine.policy import DEFAULT_POLICY
from ..interrupt_ids import checked_scheme
from ..stores.base import PAGE_SIZE, Selection
from ..waiting import WaitingHead
from . import checks
from .report import Outcome, RunReport, ThreadReport

ProgressFn = Callable[[RunReport], None]
ThreadFn = Callable[[ThreadReport], None]
WaitingFn = Callable[[WaitingHead], None]


@dataclass(frozen=True)
class RunOptions:
    """What `repair_threads` was asked to do; recorded with the run."""

    dry_run: bool = False
    channels: Sequence[str] = ("messages",)
    threads: Sequence[str] | None = None
    min_idle: timedelta | float = timedelta(minutes=10)
    """Skip threads written more recently; a number is taken as seconds (see `idle`)."""
    shard: tuple[int, int] | None = None
    concurrency: int = 4
    limit: int | None = None
    """Repair at most this many threads (canary runs); the rest wait for the next run."""
    policy: RepairPolicy = DEFAULT_POLICY
    max_writes_per_second: float | None = None
    page_size: int = PAGE_SIZE
    max_reported_threads: int | None = None
    """Keep at most this many broken heads in the report's `threads` (the first by thread
    id; the rest are counted in `threads_not_listed`), so a run's memory stays flat on a
    store of millions; None keeps every one."""
    moved_types: Mapping[Any, Any] = field(default_factory=dict)
    """Lost types to rename in the stored bytes (action `type_moved`), as
    `{"old.mod:Old": "new.mod:New"}` or `{(module, name): (module, name)}`; a lost type
    without an entry is reported, never guessed."""
    rewind_unreadable: bool = False
    """Give a head that does not decode a new head copying its newest readable ancestor
    (action `rewound`). Never the default: it forgets what the newer checkpoints held."""
    waiting: bool = False
    """Also list the heads waiting on a human (an open interrupt) idle at least
    `min_idle`, with their questions (`RunReport.waiting`). It writes nothing."""
    graph: GraphShape | Any | None = None
    """The graph that resumes the store's threads (a `StateGraph`, a compiled graph, or
    `drift.load_graph`'s shape): each head's next work is checked against it
    (`node_missing`, `channel_missing`)."""
    renamed_nodes: Mapping[str, str] = field(default_factory=dict)
    """Nodes the graph renamed, `{OLD: NEW}`: a head whose work names OLD gets it moved
    to NEW (action `node_renamed`). Needs `graph`; a missing node without an entry is
    reported, never guessed."""
    graph_id: str | None = None
    """With `graph`: only heads whose checkpoint metadata names this `graph_id` (as the
    Agent Server tags each graph's threads) or none are looked at; the others belong to
    another graph of the store and are skipped (`other_graph`)."""
    interrupt_ids: InterruptIds | None = None
    """How the LangGraph release that will resume the store makes interrupt ids
    (`per-question` for 1.2.20 and later, `first` for 1.2.19 and earlier): each paused
    question whose stored id it does not compute is found (`interrupt_id_mismatch`) and
    re-keyed in place (action `interrupt_rekeyed`). None: ids are only checked for
    questions they do not tell apart (`interrupt_id_shared`)."""
    prove_history: bool = False
    """Prove every delta seed of each head from its rows (`delta.proof`), not only the
    empty and flattened ones a scan proves: finds a fork that committed another
    branch's messages. Every head is loaded and its namespace listed."""
    materialize: bool = False
    """Instead of repairing, write each delta head's delta channels into a new head as
    plain values (action `materialized`), the step before a downgrade
    (`batch.materializing`); every head is loaded, none is repaired."""
    run_id: str = field(default_factory=new_run_id)
    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def __post_init__(self) -> None:
        if not isinstance(self.dry_run, bool):
            raise TypeError(f"dry_run must be a bool, not {self.dry_run!r}")
        if not isinstance(self.waiting, bool):
            raise TypeError(f"waiting must be a bool, not {self.waiting!r}")
        if not isinstance(self.materialize, bool):
            raise TypeError(f"materialize must be a bool, not {self.materialize!r}")
        if not isinstance(self.rewind_unreadable, bool):
            raise TypeError(f"rewind_unreadable must be a bool, not {self.rewind_unreadable!r}")
        if not isinstance(self.policy, RepairPolicy):
            raise TypeError(f"policy must be a RepairPolicy, not {self.policy!r}")
        channels = checks.names("channels", self.channels)
        if not channels:
            raise ValueError("channels must name at least one channel")
        object.__setattr__(self, "channels", channels)
        if self.threads is not None:
            object.__setattr__(self, "threads", checks.names("threads", self.threads))
        object.__setattr__(self, "min_idle", checks.idle_time(self.min_idle, self.started))
        checks.shard(self.shard)
        checks.whole("concurrency", self.concurrency, 1)
        checks.whole("page_size", self.page_size, 1)
        if self.limit is not None:
            checks.whole("limit", self.limit, 0)
        checks.rate(self.max_writes_per_second)
        if self.max_reported_threads is not None:
            checks.whole("max_reported_threads", self.max_reported_threads, 0)
        object.__setattr__(self, "moved_types", _moved_types(self.moved_types))
        if self.graph is not None:
            object.__setattr__(self, "graph", as_shape(self.graph))
        renames = checked_renames(self.renamed_nodes, self.graph)
        object.__setattr__(self, "renamed_nodes", renames)
        if self.graph_id is not None and (not isinstance(self.graph_id, str) or not self.graph_id):
            raise ValueError(f"graph_id must be a graph's id, not {self.graph_id!r}")
        object.__setattr__(self, "interrupt_ids", checked_scheme(self.interrupt_ids))
        if self.graph_id is not None and self.graph is None:
            raise ValueError("graph_id needs the graph it names (graph=)")

    @property
    def idle(self) -> timedelta:
        """`min_idle` as a timedelta (`__post_init__` converts a number of seconds)."""
        assert isinstance(self.min_idle, timedelta)
        return self.min_idle

    @property
    def graph_shape(self) -> GraphShape | None:
        """`graph` as `__post_init__` made it: a shape, or None."""
        assert self.graph is None or isinstance(self.graph, GraphShape)
        return self.graph

    @property
    def selection(self) -> Selection:
        channels, budget = tuple(self.channels), first_look_budget(self.policy)
        shape = self.graph_shape
        return Selection(
            channels,
            self.threads,
            self.shard,
            self.page_size,
            budget,
            waiting=self.waiting,
            graph_channels=None if shape is None else shape.all_channels(),
            interrupt_ids=self.interrupt_ids,
        )

    def arguments(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "channels": list(self.channels),
            "threads": list(self.threads) if self.threads is not None else None,
            "min_idle_seconds": self.idle.total_seconds(),
            "shard": list(self.shard) if self.shard else None,
            "concurrency": self.concurrency,
            "limit": self.limit,
            "max_writes_per_second": self.max_writes_per_second,
            **({"moved_types": self.moved_texts()} if self.moved_types else {}),
            "rewind_unreadable": self.rewind_unreadable,
            **({"waiting": True} if self.waiting else {}),
            **({"graph": True} if self.graph is not None else {}),
            **({"renamed_nodes": dict(self.renamed_nodes)} if self.renamed_nodes else {}),
            **({"interrupt_ids": self.interrupt_ids} if self.interrupt_ids else {}),
            **({"materialize": True} if self.materialize else {}),
        }

    def moved_texts(self) -> dict[str, str]:
        return {type_text(old): type_text(new) for old, new in self.moved_types.items()}


def _moved_types(value: Mapping[Any, Any]) -> dict[TypeName, TypeName]:
    """Moved types as (module, name) pairs, whichever way they were given."""
    if not isinstance(value, Mapping):
        raise TypeError(f"moved_types must be a mapping, not {value!r}")
    if all(isinstance(k, tuple) and isinstance(v, tuple) for k, v in value.items()):
        return dict(value)
    return moved_from(value)


def first_look_budget(policy: RepairPolicy) -> int | None:
    """The token budget a store's first look can hold heads to, so that those it clears
    need no full load: the policy's, when a budget counted by LangChain's approximation
    is the only rule that reads contents; None otherwise (every head is loaded)."""
    budget = policy.input_budget
    if budget is None or budget < 0 or policy.token_counter is not None:
        return None
    return None if without_budget(policy).reads_content else budget


Decision = Outcome | Literal["repair"]
"""What a run does with a head before writing: "repair" (write now), or its outcome."""


def outcome_before_writing(assessment: Assessment, dry_run: bool) -> Decision | None:
    """None for a clean head; a skip reason; "would_repair" in a dry run; else "repair"."""
    status = assessment.status
    if status == "clean":
        return None
    if status == "repair":
        return "would_repair" if dry_run else "repair"
    return status
