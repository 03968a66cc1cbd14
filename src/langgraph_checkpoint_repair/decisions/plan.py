"""Pure decisions of the batch job: what a thread head needs, and the checkpoints
that repair or restore it. No I/O: the stores and the runner do that."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple, copy_checkpoint
from langgraph.checkpoint.base.id import uuid6

from ..codes import DETAIL_KEY as DETAIL_KEY
from ..decoding.integrity import Finding
from ..delta import (
    COUNTERS_KEY,
    as_snapshot,
    counters_after_snapshot,
    delta_channel_names,
    snapshot_value,
)
from ..delta.message_ids import with_ids, without_ids
from ..delta.proof import Proof, is_flattened
from ..engine import RepairAction, RepairPolicy, repair_messages
from ..engine.context import count_tokens
from ..in_flight import has_legacy_sends, has_pending_results, work_is_scheduled
from .ids import id_after

RUN_KEY = "langgraph_repair_run"
"""Top-level metadata key of a repair checkpoint: the run that wrote it (filterable)."""

Status = Literal[
    "clean", "repair", "in_flight", "recent", "unreadable", "foreign_format", "history_lost"
]


@dataclass(frozen=True)
class Assessment:
    """What one (thread, namespace) head needs."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    status: Status
    broken: bool
    """The history breaks the pairing rules (pending in-flight calls aside)."""
    actions: Mapping[str, tuple[RepairAction, ...]] = field(default_factory=dict)
    repaired: Mapping[str, list[BaseMessage]] = field(default_factory=dict)
    snapshots: frozenset[str] = frozenset()
    """Delta channels among `repaired`: a repair stores them as `_DeltaSnapshot`s."""
    tokens: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """With a token budget: each repaired channel's count before and after."""
    findings: tuple[Finding, ...] = ()
    """What is wrong with the head's stored bytes (`decoding.integrity`)."""
    stored_as_is: Mapping[str, Any] = field(default_factory=dict)
    """Channel values to write back as they are stored (extensions kept as raw bytes,
    `decisions.stored_bytes.as_stored`): a repair of the bytes builds no object."""
    rewind: Mapping[str, Any] | None = None
    """An unreadable head under `--rewind-unreadable`: the ancestor rewound to and how
    many checkpoints were passed over, or why none was (`decisions.rewind`)."""

    def with_findings(self, found: tuple[Finding, ...]) -> Assessment:
        """This assessment with `found` after its findings (itself when there is none)."""
        return replace(self, findings=(*self.findings, *found)) if found else self


def tuple_key(tup: CheckpointTuple) -> tuple[str, str, str]:
    configurable = tup.config["configurable"]
    return (
        str(configurable["thread_id"]),
        str(configurable.get("checkpoint_ns", "")),
        str(configurable["checkpoint_id"]),
    )


def assess(
    tup: CheckpointTuple,
    *,
    channels: Sequence[str],
    policy: RepairPolicy,
    min_idle: timedelta,
    now: datetime,
    proven: Mapping[str, Proof] | None = None,
    given_ids: Collection[str] = (),
) -> Assessment:
    """Decide what to do with a head: repair it, leave it, or skip it and say why.

    Calls that may still run (work is scheduled) are left to run. A head holding
    pending results (an interrupt, finished tasks' writes) is never written on,
    since a checkpoint on top of it would leave them behind; threads written
    within `min_idle` wait for a later run. Delta channels must be rebuilt
    (`stores.history.load_rebuilt`) before: what is not stored here is not seen.
    A channel in `proven` (`stores.history.read_proofs`) is repaired from the value its
    rows prove instead of the one LangGraph reads. A delta channel in `given_ids` (its
    stored seed holds messages without an id: `delta.message_ids.seeds_without_ids`) is
    repaired with ids given to them, stored as a snapshot.
    """
    thread_id, ns, checkpoint_id = tuple_key(tup)
    scheduled = work_is_scheduled(tup)
    values = tup.checkpoint["channel_values"]
    actions: dict[str, tuple[RepairAction, ...]] = {}
    repaired: dict[str, list[BaseMessage]] = {}
    tokens: dict[str, tuple[int, int]] = {}
    findings: list[Finding] = []
    pending_calls = False
    proven = proven or {}
    delta = delta_channel_names(tup) | set(proven)
    for name in channels:
        history = snapshot_value(values.get(name))
        if name in proven:
            history = proven[name].value
        if not isinstance(history, list):
            continue
        given: tuple[RepairAction, ...] = ()
        if name in delta and (missing := without_ids(history)):
            findings.append(Finding("message_id_missing", name, error=_no_ids(missing)))
            if name in given_ids:
                history, given = _ids_given(history, f"{thread_id}|{ns}|{name}")
        result = repair_messages(history, policy=policy, in_flight=scheduled)
        done, over = _without_over_budget(result.actions)
        if over is not None:
            findings.append(Finding("over_budget", name, error=over.detail))
        if name in proven:
            actions[name] = (*divergence_actions(proven[name]), *given, *done)
            repaired[name] = result.messages
        elif result.changed or given:
            actions[name], repaired[name] = (*given, *done), result.messages
        elif scheduled and repair_messages(history, policy=policy).changed:
            pending_calls = True
        if policy.input_budget is not None and (result.changed or over is not None):
            tokens[name] = token_estimates(history, result.messages, policy)
    broken = bool(repaired)
    status: Status = "clean"
    if broken and _holds_work(tup):
        status = "in_flight"
    elif broken:
        status = "recent" if _written_since(tup.checkpoint, now - min_idle) else "repair"
    elif pending_calls:
        status = "in_flight"
    snapshots = frozenset(repaired) & delta
    return Assessment(
        thread_id,
        ns,
        checkpoint_id,
        status,
        broken,
        actions,
        repaired,
        snapshots,
        tokens,
        tuple(findings),
    )


def _no_ids(missing: int) -> str:
    return f"{missing} messages without an id: no RemoveMessage can name them"


def _ids_given(
    history: list[BaseMessage], where: str
) -> tuple[list[BaseMessage], tuple[RepairAction, ...]]:
    """The history with ids given to its messages that lack one (`with_ids`), and one
    `message_id_stamped` action for each, at its place, named `snapshot` (no write of
    it is stamped: it lies in the stored seed)."""
    changed, places = with_ids(history, where)
    given = tuple(RepairAction("message_id_stamped", None, None, n, "snapshot") for n in places)
    return changed, given


def divergence_actions(proof: Proof) -> tuple[RepairAction, ...]:
    """One action for each seed its rows proved wrong, saying where and what it held."""
    return tuple(
        RepairAction(
            found.code,
            None,
            None,
            0,
            f"checkpoint {found.checkpoint_id}: stored {_count(found.stored)}, "
            f"its rows prove {len(found.proven)} messages",
        )
        for found in proof.divergences
    )


def _count(stored: Any) -> str:
    value = snapshot_value(stored)
    if is_flattened(value):
        return f"1 list of {len(value[0])} messages"
    return f"{len(value)} messages" if isinstance(value, list) else type(value).__name__


def _without_over_budget(
    actions: tuple[RepairAction, ...],
) -> tuple[tuple[RepairAction, ...], RepairAction | None]:
    """The actions a repair does, and the engine's `over_budget`, which says what no
    repair does: the history still does not fit. A run reports it as a finding of the
    head, on every look, for as long as it does not fit."""
    over = next((a for a in actions if a.kind == "over_budget"), None)
    if over is None:
        return actions, None
    return tuple(a for a in actions if a is not over), over


def bytes_status(tup: CheckpointTuple, min_idle: timedelta, now: datetime) -> Status:
    """Whether a head whose stored bytes need a repair may be written on now: not while
    it holds pending results (a checkpoint on top would leave them behind), nor while
    the application may still be writing to it."""
    if _holds_work(tup):
        return "in_flight"
    return "recent" if _written_since(tup.checkpoint, now - min_idle) else "repair"


def _holds_work(tup: CheckpointTuple) -> bool:
    """Whether a checkpoint on top of the head would leave work behind: its pending
    results, or the sends of a checkpoint stored before format 4 (`has_legacy_sends`)."""
    return has_pending_results(tup.pending_writes or ()) or has_legacy_sends(tup.checkpoint)


def token_estimates(
    before: list[BaseMessage], after: list[BaseMessage], policy: RepairPolicy
) -> tuple[int, int]:
    """A history's tokens before and after repair, as the policy's counter counts them
    (once, when the repair left the list as it was)."""
    counted = count_tokens(before, policy.token_counter)
    return counted, counted if after is before else count_tokens(after, policy.token_counter)


def written_after(ts: Any, moment: datetime) -> bool:
    """Whether a head whose time is `ts` was written after `moment` (a live thread,
    within --min-idle); a time that does not read is not."""
    try:
        written = datetime.fromisoformat(ts.replace("Z", "+00:00"))  # JS's "Z" too
    except (AttributeError, TypeError, ValueError):
        return False
    if written.tzinfo is None:
        written = written.replace(tzinfo=timezone.utc)
    return written > moment


def _written_since(checkpoint: Checkpoint, moment: datetime) -> bool:
    return written_after(checkpoint.get("ts"), moment)


@dataclass(frozen=True)
class NewCheckpoint:
    """Everything `saver.put` needs to append a checkpoint on top of a head."""

    config: Any
    checkpoint: Checkpoint
    metadata: Any
    new_versions: dict[str, Any]
    writes: tuple[tuple[str, str, Any], ...] = ()
    """Pending writes that go with it, `(task_id, channel, value)`: the head's own,
    re-keyed to the tasks of the new checkpoint (`drift.retarget`)."""

    @property
    def checkpoint_id(self) -> str:
        return self.checkpoint["id"]

    @property
    def written_config(self) -> Any:
        """The config of the checkpoint once written: where its pending writes go."""
        configurable = self.config["configurable"]
        return {"configurable": {**configurable, "checkpoint_id": self.checkpoint_id}}

    def task_writes(self) -> list[tuple[str, list[tuple[str, Any]]]]:
        """Its pending writes by task, in order, as `put_writes` takes them."""
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in self.writes:
            by_task.setdefault(task_id, []).append((channel, value))
        return list(by_task.items())


def checkpoint_on_top(
    head: CheckpointTuple,
    values: Mapping[str, list[BaseMessage]],
    next_version: Callable[[Any, None], Any],
    detail: Mapping[str, Any],
    run_id: str,
    snapshots: Collection[str] = (),
) -> NewCheckpoint:
    """A copy of `head` (as stored) with `values` replaced, as LangGraph's own update_state
    writes it: source "update", step + 1, versions advanced with the saver's scheme.

    Channels in `snapshots` are delta channels: their whole list is stored as a
    `_DeltaSnapshot` and their snapshot counter restarts, so that LangGraph,
    with or without this package, rebuilds them from here.
    """
    checkpoint = copy_checkpoint(head.checkpoint)
    step = int(head.metadata.get("step", -1)) + 1
    checkpoint["id"] = id_after(head.checkpoint["id"], step)  # application writes stay newer
    checkpoint["ts"] = datetime.now(timezone.utc).isoformat()
    current = max(checkpoint["channel_versions"].values(), default=None)
    new_versions = {}
    for name, messages in values.items():
        current = next_version(current, None)
        checkpoint["channel_values"][name] = (
            as_snapshot(messages) if name in snapshots else messages
        )
        checkpoint["channel_versions"][name] = current
        new_versions[name] = current
    checkpoint["updated_channels"] = list(values)
    counters = counters_after_snapshot(head.metadata, snapshots)
    own = {RUN_KEY: run_id, DETAIL_KEY: dict(detail), COUNTERS_KEY: counters}
    metadata = carried_metadata(head.metadata, step, own)
    thread_id, ns, head_id = tuple_key(head)
    config = {
        "configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": head_id}
    }
    return NewCheckpoint(config, checkpoint, metadata, new_versions)


TOOL_KEYS = frozenset({RUN_KEY, DETAIL_KEY, COUNTERS_KEY})
"""The metadata keys each checkpoint the tool writes sets for itself (or leaves out):
never carried over from the checkpoint it is written on."""


def carried_metadata(
    on: Mapping[str, Any] | None, step: int, own: Mapping[str, Any]
) -> dict[str, Any]:
    """The metadata of a checkpoint the tool writes on the checkpoint whose metadata is
    `on`: every key of it (the application's own, the Agent Server's `graph_id`,
    `assistant_id`, `user_id`, ...), so that a reader of the thread's newest checkpoint
    sees the same thread; `source`, `step` and `parents` set as LangGraph's
    `update_state` sets them, and the tool's own keys (`own`) as this write says (one
    set to None is left out, as LangGraph leaves out counters at zero)."""
    carried = {key: value for key, value in (on or {}).items() if key not in TOOL_KEYS}
    parents = dict(carried.get("parents") or {})
    set_here = {key: value for key, value in own.items() if value is not None}
    return {**carried, "source": "update", "step": step, "parents": parents, **set_here}


def repair_detail(assessment: Assessment) -> dict[str, Any]:
    return {
        "kind": "repair",
        "source_checkpoint_id": assessment.checkpoint_id,
        "actions": {
            name: [a.to_dict() for a in actions] for name, actions in assessment.actions.items()
        },
    }


def undo_detail(undone_run: str, repair_checkpoint_id: str) -> dict[str, Any]:
    return {"kind": "undo", "undo_of": undone_run, "repair_checkpoint_id": repair_checkpoint_id}


def shard_of(thread_id: str, shards: int) -> int:
    """A stable shard number, the same in every process and on every machine: how
    SQLite and other savers split a store (PostgreSQL cuts ranges, `postgres.shards`)."""
    return int(hashlib.md5(thread_id.encode()).hexdigest()[:7], 16) % shards


def new_run_id() -> str:
    return f"run-{uuid6().hex[:20]}"
