"""A head's next work moved from a node the graph renamed to its new name. Pure.

The operator says which node became which (`--node-renamed OLD=NEW`, `renamed_nodes=`);
nothing is guessed. What LangGraph reads to prepare the work moves with it: the branch
channel (its value, its version, the node's `versions_seen`, `updated_channels`), the
pending Sends, and the pending writes of the head's tasks, re-keyed to the task ids and
interrupt ids LangGraph computes for the new node. A channel the graph lacks that would
pause every resume is dropped. The batch job writes the result as a new checkpoint;
the wrapper hands it out in place of the loaded head.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import Checkpoint, CheckpointTuple, copy_checkpoint

from ..engine.actions import RepairAction
from ..in_flight import INTERRUPT_CHANNEL
from ..interrupt_ids import question_id, task_namespace, with_id
from ..stale_answers import NULL_TASK_ID, RESUME_CHANNEL
from ..waiting import (
    BRANCH_PREFIX,
    PULL,
    SENDS_CHANNEL,
    TaskOrigin,
    interrupts_of,
    task_id,
    task_origins,
)
from .findings import newer, next_work

GRAPH_CHANNEL = "__graph__"
"""The channel a re-targeting's actions are recorded under."""
MAX_ANSWERS = 64
"""Interrupts one task may have asked before the open one (ids are tried up to it)."""

Write = tuple[str, str, Any]
Triggers = Callable[[str], Sequence[str]]
NextVersion = Callable[[Any, None], Any]


@dataclass(frozen=True)
class Retargeted:
    """The re-targeted checkpoint, the versions it advanced, its pending writes."""

    checkpoint: Checkpoint
    new_versions: dict[str, Any]
    writes: tuple[Write, ...]
    actions: tuple[RepairAction, ...]


def branch_triggers(node: str) -> tuple[str, ...]:
    """A node's triggers where no graph says: its branch channel (a `StateGraph` node
    reached by edges, `Command(goto=...)` or conditional edges)."""
    return (BRANCH_PREFIX + node,)


def retarget(
    tup: CheckpointTuple,
    target: Checkpoint,
    target_step: int,
    *,
    renames: Mapping[str, str],
    drops: Collection[str] = (),
    triggers: Triggers = branch_triggers,
    next_version: NextVersion | None = None,
    drop_answer: bool = False,
) -> Retargeted | str:
    """`target` (a copy of the head, with the id it is written or shown under, at step
    `target_step`) with the head's work on each renamed node moved to its new name and
    `drops` removed; a sentence saying why not where a pending write cannot follow.

    With `next_version`, every changed channel gets a new version (a checkpoint written
    on top); without, versions stay (the loaded head shown re-targeted). With
    `drop_answer`, the null task's answer (a stale one) does not follow.
    """
    moved = _Moves(target, next_version)
    for old, new in renames.items():
        moved.rename_branch(old, new)
    moved.rename_sends(renames)
    for channel in drops:
        moved.drop(channel)
    writes = _rekeyed_writes(tup, target, target_step, renames, triggers)
    if drop_answer and not isinstance(writes, str):
        writes = tuple(w for w in writes if (w[0], w[1]) != (NULL_TASK_ID, RESUME_CHANNEL))
    if isinstance(writes, str):
        return writes
    target["updated_channels"] = moved.updated(tup.checkpoint.get("updated_channels"))
    return Retargeted(target, moved.changed, writes, moved.actions)


class _Moves:
    """The channel moves on one target checkpoint, with what they changed."""

    def __init__(self, target: Checkpoint, next_version: NextVersion | None) -> None:
        self.target: dict[str, Any] = target  # type: ignore[assignment]
        self.values = target["channel_values"]
        self.versions = target["channel_versions"]
        self.seen = target["versions_seen"]
        self.next_version = next_version
        self.current = max(self.versions.values(), default=None)
        self.changed: dict[str, Any] = {}
        self.renamed: dict[str, str] = {}
        self.moved: dict[str, str] = {}
        self.dropped: list[str] = []

    def advance(self, channel: str, version: Any) -> Any:
        if self.next_version is not None:
            self.current = version = self.next_version(self.current, None)
        self.versions[channel] = version
        self.changed[channel] = version
        return version

    def rename_branch(self, old: str, new: str) -> None:
        """Move `branch:to:OLD` to `branch:to:NEW`, triggering NEW exactly when it
        triggered OLD."""
        old_channel, new_channel = BRANCH_PREFIX + old, BRANCH_PREFIX + new
        if old_channel not in self.versions:
            return
        version = self.versions.pop(old_channel)
        entry = dict(self.seen.pop(old, {}))
        last = entry.pop(old_channel, None)
        triggered = old_channel in self.values and newer(version, last)
        if old_channel in self.values:
            self.values[new_channel] = self.values.pop(old_channel)
        written = self.advance(new_channel, version)
        if not triggered:
            entry[new_channel] = written
        elif last is not None:
            entry[new_channel] = last
        if entry:
            self.seen[new] = {**self.seen.get(new, {}), **entry}
        self.renamed[old_channel] = new_channel
        self.moved[old] = new

    def rename_sends(self, renames: Mapping[str, str]) -> None:
        sends = self.values.get(SENDS_CHANNEL)
        if isinstance(sends, list) and any(_sent_to(s) in renames for s in sends):
            self.values[SENDS_CHANNEL] = [_resent(s, renames) for s in sends]
            self.advance(SENDS_CHANNEL, self.versions.get(SENDS_CHANNEL))
            self.moved.update((s.node, renames[s.node]) for s in sends if _sent_to(s) in renames)
        legacy = self.target.get("pending_sends")  # a checkpoint stored before format 4
        if isinstance(legacy, list) and any(_sent_to(s) in renames for s in legacy):
            self.moved.update((s.node, renames[s.node]) for s in legacy if _sent_to(s) in renames)
            self.target["pending_sends"] = [_resent(s, renames) for s in legacy]

    def drop(self, channel: str) -> None:
        self.values.pop(channel, None)
        self.versions.pop(channel, None)
        for entry in self.seen.values():
            entry.pop(channel, None)
        self.dropped.append(channel)

    @property
    def actions(self) -> tuple[RepairAction, ...]:
        """One `node_renamed` per node whose work moved, one `channel_dropped` per drop."""
        renamed = [
            RepairAction("node_renamed", None, None, 0, f"{old} -> {new}")
            for old, new in self.moved.items()
        ]
        dropped = [RepairAction("channel_dropped", None, None, 0, c) for c in self.dropped]
        return (*renamed, *dropped)

    def updated(self, before: Any) -> list[str] | None:
        """The head's `updated_channels` with the renames applied, and what changed."""
        if before is None:
            return None
        names = [self.renamed.get(name, name) for name in before]
        return list(dict.fromkeys([*names, *self.changed]))


def _sent_to(send: Any) -> Any:
    return getattr(send, "node", None)


def _resent(send: Any, renames: Mapping[str, str]) -> Any:
    from langgraph.types import Send  # the graph runtime, only where a send moves

    node = _sent_to(send)
    return Send(renames[node], send.arg) if node in renames else send


def _rekeyed_writes(
    tup: CheckpointTuple,
    target: Checkpoint,
    target_step: int,
    renames: Mapping[str, str],
    triggers: Triggers,
) -> tuple[Write, ...] | str:
    """The head's pending writes under the ids of `target`'s tasks."""
    origins = task_origins(tup)
    parent = str(tup.config["configurable"].get("checkpoint_ns", ""))
    written: list[Write] = []
    for old_id, channel, value in tup.pending_writes or ():
        if old_id == NULL_TASK_ID:
            renamed = _renamed_channel(channel, renames)
            written.append((old_id, renamed, value))
            continue
        origin = origins.get(old_id)
        if origin is None:
            return f"a pending write of task {old_id} (channel {channel!r}) names no node here"
        node = renames.get(origin.node, origin.node)
        trigger = (PULL, *triggers(node)) if origin.trigger[0] == PULL else origin.trigger
        new_id = task_id(target, parent, target_step + 1, node, trigger)
        if channel == INTERRUPT_CHANNEL:
            old_ns, new_ns = _task_ns(parent, origin, old_id), _task_ns(parent, node, new_id)
            value = _rekeyed_interrupts(value, old_ns, new_ns)
            if value is None:
                return (
                    f"the question of task {old_id} was asked inside a subgraph of {origin.node!r}"
                )
        written.append((new_id, channel, value))
    return tuple(written)


def _renamed_channel(channel: str, renames: Mapping[str, str]) -> str:
    if channel.startswith(BRANCH_PREFIX) and channel[len(BRANCH_PREFIX) :] in renames:
        return BRANCH_PREFIX + renames[channel[len(BRANCH_PREFIX) :]]
    return channel


def _task_ns(parent: str, node: str | TaskOrigin, task: str) -> str:
    return task_namespace(parent, node.node if isinstance(node, TaskOrigin) else node, task)


def interrupt_id(task_ns: str, answered: int) -> str:
    """The id a task at `task_ns` gives the question it asks after `answered` answers
    (with none: the namespace's hash, as every release computes it; a stored first id
    on a later question matches `answered` 0, so each release's ids stay its own)."""
    return question_id(task_ns, answered, "per-question")


def _rekeyed_interrupts(value: Any, old_ns: str, new_ns: str) -> Any:
    """The interrupts with the ids they get at `new_ns`; None if one was not raised at
    `old_ns` (a subgraph's question, bubbled up to its parent's task)."""
    rekeyed = []
    for item in interrupts_of(value):
        old = getattr(item, "id", None)
        answered = next((n for n in range(MAX_ANSWERS) if interrupt_id(old_ns, n) == old), None)
        if answered is None:
            return None
        rekeyed.append(with_id(item, interrupt_id(new_ns, answered)))
    return type(value)(rekeyed) if isinstance(value, (list, tuple)) else rekeyed[0]


def retargeted_view(tup: CheckpointTuple, renames: Mapping[str, str]) -> CheckpointTuple | str:
    """The loaded head as the graph with `renames` resumes it, nothing written: the same
    id and versions, its work and pending writes moved; `tup` itself when no work of it
    names a renamed node; a sentence saying why not where it cannot be moved."""
    if not any(item.node in renames for item in next_work(tup)):
        return tup
    step = int((tup.metadata or {}).get("step", -1))
    found = retarget(tup, copy_checkpoint(tup.checkpoint), step, renames=renames)
    if isinstance(found, str):
        return found
    return CheckpointTuple(
        tup.config, found.checkpoint, tup.metadata, tup.parent_config, list(found.writes)
    )
