"""Heads waiting on a human: the open interrupts of a checkpoint, read without the graph.

A task that calls `interrupt()` leaves an `__interrupt__` pending write on the head,
holding the question (`Interrupt.value`) and its id; the thread waits until a
`Command(resume=...)` comes. `scan --waiting` lists those heads with their age (the
head's own `ts`) so an operator sees who waits, on what, and since when.

The node that asked is not stored with the write. LangGraph names a task by hashing
the checkpoint id, the namespace, the step, the node and its trigger, so the node is
found by hashing each candidate the checkpoint holds (every `branch:to:<node>`
channel, every pending `Send`) and matching the write's task id. A task no candidate
matches (a node joined by several edges, a functional-API task) has no node: None.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from hashlib import sha1
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from xxhash import xxh3_128_hexdigest

from .in_flight import INTERRUPT_CHANNEL

BRANCH_PREFIX = "branch:to:"
"""The channel whose update triggers a node of a `StateGraph` (its name follows)."""
SENDS_CHANNEL = "__pregel_tasks"
PULL, PUSH = "__pregel_pull", "__pregel_push"


@dataclass(frozen=True)
class OpenInterrupt:
    """One question a task asked: its id (what `Command(resume={id: ...})` names), the
    value it asked with, and the node that asked (None when it cannot be told)."""

    id: str | None
    value: Any
    node: str | None
    id_shared: bool = False
    """Its id does not tell it apart from another question of its task
    (`interrupt_ids`): an answer meant for that one, retried by id, lands here."""

    def to_json(self) -> dict[str, Any]:
        shown = {"id": self.id, "value": json_value(self.value), "node": self.node}
        return {**shown, "id_shared": True} if self.id_shared else shown


@dataclass(frozen=True)
class WaitingHead:
    """A head with at least one open interrupt, and when it was written."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    since: datetime | None
    """The head's `ts`; None when it does not read as a time."""
    interrupts: tuple[OpenInterrupt, ...]

    def idle(self, now: datetime) -> timedelta | None:
        """How long the head has waited at `now` (never negative)."""
        if self.since is None:
            return None
        return max(now - self.since, timedelta(0))

    def to_json(self, now: datetime) -> dict[str, Any]:
        idle = self.idle(now)
        return {
            "thread_id": self.thread_id,
            "checkpoint_ns": self.checkpoint_ns,
            "checkpoint_id": self.checkpoint_id,
            "waiting_since": None if self.since is None else self.since.isoformat(),
            "idle_seconds": None if idle is None else int(idle.total_seconds()),
            "interrupts": [interrupt.to_json() for interrupt in self.interrupts],
        }


AGE_BUCKETS = (
    (timedelta(hours=1), "under_1h"),
    (timedelta(days=1), "1h_to_1d"),
    (timedelta(days=7), "1d_to_7d"),
)
"""Upper bounds of the ages a metric counts waiting heads by; older: `7d_or_more`."""


def age_bucket(idle: timedelta | None) -> str:
    """The bucket of a waiting head's age, for a metric's attribute (bounded values)."""
    if idle is None:
        return "unknown"
    return next((name for bound, name in AGE_BUCKETS if idle < bound), "7d_or_more")


def waiting_head(tup: CheckpointTuple) -> WaitingHead | None:
    """The head's open interrupts, with the node of each; None when it waits on nobody.

    Only a thread's root head is listed: a subgraph's question is also an open
    interrupt of the root head (of the node that runs the subgraph), and the thread
    is resumed from there.
    """
    configurable = tup.config["configurable"]
    if configurable.get("checkpoint_ns", ""):
        return None
    asked = list(_interrupt_writes(tup.pending_writes or ()))
    if not asked:
        return None
    nodes = task_nodes(tup)
    interrupts = tuple(
        OpenInterrupt(
            interrupt_field(item, "id"), interrupt_field(item, "value"), nodes.get(task_id)
        )
        for task_id, items in asked
        for item in items
    )
    return WaitingHead(
        str(configurable["thread_id"]),
        "",
        str(configurable["checkpoint_id"]),
        written_at(tup.checkpoint.get("ts")),
        interrupts,
    )


def _interrupt_writes(writes: Iterable[tuple[str, str, Any]]) -> Iterator[tuple[str, list[Any]]]:
    """Each `__interrupt__` write's task id and its interrupts (a list, or one value)."""
    for task_id, channel, value in writes:
        if channel == INTERRUPT_CHANNEL:
            yield str(task_id), interrupts_of(value)


def interrupts_of(value: Any) -> list[Any]:
    """The interrupts of one `__interrupt__` write (a list, or one value)."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def interrupt_field(item: Any, name: str) -> Any:
    """An interrupt's field, whether it was read as an `Interrupt` or as plain data (a
    LangGraph.js store, a serializer that keeps no classes)."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, item if name == "value" else None)


def task_nodes(tup: CheckpointTuple) -> dict[str, str]:
    """The node of each task the head runs next, by task id, as LangGraph names them."""
    return {task_id: origin.node for task_id, origin in task_origins(tup).items()}


@dataclass(frozen=True)
class TaskOrigin:
    """What LangGraph hashed into a task's id: its node, and the trigger (`PULL` and the
    branch channel, or `PUSH` and the send's index)."""

    node: str
    trigger: tuple[str, str]


def task_origins(tup: CheckpointTuple) -> dict[str, TaskOrigin]:
    """Each task the head may run next, by the id LangGraph gives it, with its origin.

    A node is hashed with one trigger, its branch channel: a node LangGraph triggers
    otherwise (a join of several edges) matches no task here.
    """
    checkpoint, metadata = tup.checkpoint, tup.metadata or {}
    step = metadata.get("step")
    if not isinstance(step, int) or checkpoint_id_bytes(checkpoint) is None:
        return {}
    parent = str(tup.config["configurable"].get("checkpoint_ns", ""))
    origins: dict[str, TaskOrigin] = {}
    for node, trigger in _candidates(checkpoint, tup.pending_writes or ()):
        origins[task_id(checkpoint, parent, step + 1, node, trigger)] = TaskOrigin(node, trigger)
    return origins


def checkpoint_id_bytes(checkpoint: Mapping[str, Any]) -> bytes | None:
    """The checkpoint id's 16 bytes, as LangGraph hashes them; None for an id that is
    not a UUID."""
    try:
        return binascii.unhexlify(str(checkpoint["id"]).replace("-", ""))
    except (KeyError, ValueError, binascii.Error):
        return None


def task_id(
    checkpoint: Mapping[str, Any], parent_ns: str, step: int, node: str, trigger: Iterable[str]
) -> str:
    """The id LangGraph gives the task of `node` prepared from `checkpoint` at `step`
    (the checkpoint's own step + 1), under the namespace `parent_ns`; `trigger` is
    `(PULL, *sorted triggers)` or `(PUSH, send index)`."""
    id_bytes = checkpoint_id_bytes(checkpoint) or b""
    namespace = f"{parent_ns}|{node}" if parent_ns else node
    hashed = _xxhash_id if int(checkpoint.get("v", 1)) > 1 else _uuid5_id
    return hashed(id_bytes, namespace, str(step), node, *trigger)


def _candidates(
    checkpoint: Mapping[str, Any], writes: Iterable[tuple[str, str, Any]]
) -> Iterator[tuple[str, tuple[str, str]]]:
    """Each node the checkpoint may run next, with the trigger LangGraph hashes for it:
    its branch channels, those a pending write updates (`Command(goto=...)`), its sends."""
    channels = [*checkpoint.get("channel_versions", {}), *(write[1] for write in writes)]
    for channel in dict.fromkeys(channels):
        if isinstance(channel, str) and channel.startswith(BRANCH_PREFIX):
            yield channel[len(BRANCH_PREFIX) :], (PULL, channel)
    sends = checkpoint.get("channel_values", {}).get(SENDS_CHANNEL)
    for index, send in enumerate(sends if isinstance(sends, list) else ()):
        node = getattr(send, "node", None)
        if isinstance(node, str):
            yield node, (PUSH, str(index))


def _xxhash_id(namespace: bytes, *parts: str) -> str:
    return _as_uuid(xxh3_128_hexdigest(namespace + "".join(parts).encode()))


def _uuid5_id(namespace: bytes, *parts: str) -> str:
    return _as_uuid(sha1(namespace + "".join(parts).encode(), usedforsecurity=False).hexdigest())


def _as_uuid(hex_: str) -> str:
    return f"{hex_[:8]}-{hex_[8:12]}-{hex_[12:16]}-{hex_[16:20]}-{hex_[20:32]}"


def written_at(ts: Any) -> datetime | None:
    """A checkpoint's `ts` as an aware time; None when it is not one."""
    if not isinstance(ts, str):
        return None
    try:
        when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def json_value(value: Any) -> Any:
    """`value` as JSON can carry it: as it is when it already can, else its `repr`
    (an object the question was asked with, say) so the output never fails on it."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return repr(value)
