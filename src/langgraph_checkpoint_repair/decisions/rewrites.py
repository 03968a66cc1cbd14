"""Pending writes rewritten in place: the pure part.

A pending write belongs to its checkpoint: its task id derives from it, and a
resume applies it instead of running its task again. Carried to a new checkpoint
it would be ignored, so these repairs, alone among them, change stored rows:

- text holding U+0000 (`nul_text`, `docs/how-to/unreadable-threads.md`): the write
  keeps its checkpoint, task id and index, and only its bytes change;
- a stale answer (`stale_answers`, `docs/how-to/resume-safely.md`): the write is
  deleted (its rewritten bytes are None);
- a paused question's id, re-keyed for the release that will resume
  (`interrupt_ids`): only the id's bytes change.

The original bytes are kept in the audit (`langgraph_repair_rewrites`), so `undo`
puts them back, and only where the row is still as this repair left it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Literal

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..codes import ActionKind, NulMode
from ..decoding.integrity import StoredValue, nul_in_text
from ..decoding.nul import holds_nul, scrub_nul
from ..engine import RepairAction
from ..in_flight import INTERRUPT_CHANNEL
from ..stale_answers import NULL_TASK_ID, RESUME_CHANNEL
from .races import WriteOutcome

WriteState = Literal["as_read", "as_rewritten", "changed"]
"""A write's bytes at the last look: still the original, already the rewrite, or other."""


@dataclass(frozen=True)
class WriteRewrite:
    """One pending write's bytes before and after the rewrite."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    type: str
    original: bytes | None
    """None only in the reversed rewrite of a deleted write: undo inserts it again."""
    rewritten: bytes | None
    """None when the repair deletes the write."""

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """Its row's primary key in `checkpoint_writes`."""
        return (self.thread_id, self.checkpoint_ns, self.checkpoint_id, self.task_id, self.idx)

    def state(self, current: bytes | None) -> WriteState:
        if current == self.original:
            return "as_read"
        return "as_rewritten" if current == self.rewritten else "changed"

    def reversed(self) -> WriteRewrite:
        """The rewrite that puts the original bytes back (what `undo` does)."""
        return _replace_bytes(self, self.rewritten, self.original)


def _replace_bytes(
    rewrite: WriteRewrite, original: bytes | None, rewritten: bytes | None
) -> WriteRewrite:
    fields = {**vars(rewrite), "original": original, "rewritten": rewritten}
    return WriteRewrite(**fields)


@dataclass(frozen=True)
class RewritePlan:
    """The writes of one head to rewrite, and the action kind they are recorded as."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    kind: ActionKind
    writes: tuple[WriteRewrite, ...]
    kinds: tuple[ActionKind, ...] = ()
    """Each write's kind, where a plan joins several (`joined`); else `kind` for all."""

    @property
    def head(self) -> tuple[str, str, str]:
        """The head whose writes these are: thread, namespace, checkpoint."""
        return (self.thread_id, self.checkpoint_ns, self.checkpoint_id)

    def kind_of(self, n: int) -> ActionKind:
        """The kind of the plan's `n`-th write."""
        return self.kinds[n] if self.kinds else self.kind

    def does(self, kind: ActionKind) -> bool:
        """Whether one of its writes is of `kind`."""
        return any(self.kind_of(n) == kind for n in range(len(self.writes)))

    def actions(self) -> dict[str, tuple[RepairAction, ...]]:
        """The rewrites as repair actions by channel, for the report and the metrics
        (`detail` names the task, `index` is the write's index in it)."""
        found: dict[str, list[RepairAction]] = {}
        for n, write in enumerate(self.writes):
            action = RepairAction(self.kind_of(n), None, None, write.idx, detail=write.task_id)
            found.setdefault(write.channel, []).append(action)
        return {channel: tuple(actions) for channel, actions in found.items()}

    def audit_actions(self) -> dict[str, list[dict[str, Any]]]:
        """The audit row's `actions`: by channel, each write's kind, task id and index."""
        found: dict[str, list[dict[str, Any]]] = {}
        for n, write in enumerate(self.writes):
            entry = {"kind": self.kind_of(n), "task_id": write.task_id, "idx": write.idx}
            found.setdefault(write.channel, []).append(entry)
        return found


def joined(plans: Iterable[RewritePlan | None]) -> RewritePlan | None:
    """The plans of one head as one (written in one transaction), each write keeping its
    kind; None when there is none."""
    kept = [plan for plan in plans if plan is not None]
    if len(kept) < 2:
        return kept[0] if kept else None
    writes = tuple(write for plan in kept for write in plan.writes)
    kinds = tuple(plan.kind_of(n) for plan in kept for n in range(len(plan.writes)))
    return RewritePlan(*kept[0].head, kept[0].kind, writes, kinds)


def nul_kind(mode: NulMode) -> ActionKind:
    return "nul_replaced" if mode == "replace" else "nul_stripped"


def nul_rewrites(
    key: tuple[str, str, str],
    values: Sequence[StoredValue],
    serde: SerializerProtocol,
    mode: NulMode,
) -> RewritePlan | None:
    """The head's pending writes whose text holds U+0000, each scrubbed (`scrub_nul`) and
    encoded again by the saver's own serializer; None when there is none."""
    writes = tuple(_scrubbed(key, value, serde, mode) for value in values if _nul_write(value))
    kept = tuple(write for write in writes if write is not None)
    return RewritePlan(*key, nul_kind(mode), kept) if kept else None


def _nul_write(value: StoredValue) -> bool:
    if value.task_id is None or value.idx is None or value.blob is None:
        return False
    return value.type == "msgpack" and nul_in_text(value.blob)


def _scrubbed(
    key: tuple[str, str, str], value: StoredValue, serde: SerializerProtocol, mode: NulMode
) -> WriteRewrite | None:
    """The write with its text scrubbed; None when the serializer would store the
    clean text as another type (the row's type is never changed)."""
    assert value.type is not None and value.blob is not None
    assert value.task_id is not None and value.idx is not None
    text = serde.loads_typed((value.type, value.blob))
    if not isinstance(text, str) or not holds_nul(text):
        return None
    type_, blob = serde.dumps_typed(scrub_nul(text, mode))
    if type_ != value.type:
        return None
    return WriteRewrite(*key, value.task_id, value.idx, value.channel, type_, value.blob, blob)


def stale_answer_drop(
    key: tuple[str, str, str], values: Sequence[StoredValue]
) -> RewritePlan | None:
    """The deletion of the head's null-task answer (found stale: `stale_answers`), from
    its row as read; None when the read shows no such row."""
    for value in values:
        if value.task_id == NULL_TASK_ID and value.channel == RESUME_CHANNEL:
            if value.idx is None or value.type is None or value.blob is None:
                return None
            write = WriteRewrite(
                *key, value.task_id, value.idx, value.channel, value.type, value.blob, None
            )
            return RewritePlan(*key, "resume_dropped", (write,))
    return None


def interrupt_rekeys(
    key: tuple[str, str, str],
    values: Sequence[StoredValue],
    moves: Mapping[str, tuple[str, str]],
) -> RewritePlan | None:
    """The `__interrupt__` writes of the tasks in `moves` (task id: the stored id, the
    id to give) with that id replaced in their bytes; None when there is none to do.
    Only the id changes: every other byte stays as the release that asked wrote it."""
    writes = []
    for value in values:
        move = moves.get(str(value.task_id))
        if value.channel != INTERRUPT_CHANNEL or move is None or value.idx is None:
            continue
        blob = rekeyed_bytes(value.type, value.blob, *move)
        if blob is not None:
            assert value.task_id is not None and value.type is not None
            write = WriteRewrite(
                *key, value.task_id, value.idx, value.channel, value.type, value.blob, blob
            )
            writes.append(write)
    return RewritePlan(*key, "interrupt_rekeyed", tuple(writes)) if writes else None


def rekeyed_bytes(type_: str | None, blob: bytes | None, old: str, new: str) -> bytes | None:
    """`blob` with the msgpack string `old` replaced by `new`; None unless the bytes are
    msgpack holding `old` exactly once (anything else is reported, never guessed)."""
    if type_ != "msgpack" or blob is None or len(old) != len(new):
        return None
    stored = ormsgpack.packb(old)
    if bytes(blob).count(stored) != 1:
        return None
    return bytes(blob).replace(stored, ormsgpack.packb(new))


def by_checkpoint(writes: Iterable[WriteRewrite]) -> Iterator[tuple[WriteRewrite, ...]]:
    """Audited rewrites (in key order) grouped by the checkpoint they belong to."""
    for _, group in groupby(writes, key=lambda write: write.key[:3]):
        yield tuple(group)


Params = tuple[Any, ...]


@dataclass(frozen=True)
class InPlaceChanges:
    """What a run may do to pending-write rows that already exist, beside appending
    checkpoints: what, on PostgreSQL, asks its role for UPDATE, DELETE or INSERT on
    the writes table. A run is checked for exactly these before it writes anything."""

    update: bool = False
    """Rewrite a write's bytes (text holding U+0000, or undoing that)."""
    delete: bool = False
    """Delete a write (a stale answer dropped)."""
    insert: bool = False
    """Insert writes: a deleted one again (undoing a dropped answer), or a head's pending
    writes under the task ids of the checkpoint that moves its work (`drift`; LangGraph
    puts an interrupt's with an upsert, which also asks UPDATE)."""


def repair_changes(stale_resume: str, moves_work: bool = False) -> InPlaceChanges:
    """A repair run's: text holding U+0000 is always rewritten; a stale answer is deleted
    unless the policy keeps it (`stale_resume=keep`); with a graph (`moves_work`), a
    head's pending writes may be put again under new task ids."""
    return InPlaceChanges(update=True, delete=stale_resume == "drop", insert=moves_work)


def undo_changes(writes: Iterable[WriteRewrite], moves_work: bool = False) -> InPlaceChanges:
    """An undo's, read off what the run it undoes changed: its rewritten bytes are put
    back, its deleted writes inserted again, the work it moved moved back (`moves_work`:
    pending writes put under the old task ids)."""
    listed = list(writes)
    rewritten = any(w.original is not None and w.rewritten is not None for w in listed)
    return InPlaceChanges(
        update=rewritten or moves_work,
        insert=any(w.rewritten is None for w in listed) or moves_work,
    )


def changes(
    writes: Iterable[WriteRewrite], compared: bool = False
) -> tuple[list[Params], list[Params], list[Params]]:
    """The parameters giving each write its rewritten state: its new bytes (value, key),
    none (key), or, undoing a delete, its row again (key, channel, type, value): what a
    store's UPDATE, DELETE and INSERT statements take. `compared`: an update and a
    delete also end with the bytes they expect to find (a compare-and-set)."""
    updates: list[Params] = []
    deletes: list[Params] = []
    inserts: list[Params] = []
    for write in writes:
        expected = (write.original,) if compared else ()
        if write.rewritten is None:
            deletes.append((*write.key, *expected))
        elif write.original is None:
            inserts.append((*write.key, write.channel, write.type, write.rewritten))
        else:
            updates.append((write.rewritten, *write.key, *expected))
    return updates, deletes, inserts


def audit_rows(run_id: str, plan: RewritePlan) -> list[Params]:
    """One audit row per write: the run, its key, channel, type and bytes before and after."""
    return [
        (run_id, *write.key, write.channel, write.type, write.original, write.rewritten)
        for write in plan.writes
    ]


def write_from_row(row: Sequence[Any]) -> WriteRewrite:
    """A write as its audit row (`audit_rows` less the run) records it."""
    thread_id, ns, checkpoint_id, task_id, idx, channel, type_, original, rewritten = row
    return WriteRewrite(
        str(thread_id),
        str(ns),
        str(checkpoint_id),
        str(task_id),
        int(idx),
        str(channel),
        str(type_),
        bytes(original),
        None if rewritten is None else bytes(rewritten),
    )


def before_rewriting(current: Sequence[bytes | None], plan: RewritePlan) -> WriteOutcome | None:
    """None when every write still holds the bytes read; `claimed` when another run has
    rewritten them all already; `moved_on` when anything else changed them."""
    states = {write.state(blob) for write, blob in zip(plan.writes, current, strict=True)}
    if states == {"as_read"}:
        return None
    return "claimed" if states == {"as_rewritten"} else "moved_on"


RestoreOutcome = str
"""`restored`, or why a write was left alone: `claimed` (already restored, or another
undo holds the thread), `moved_on` (its bytes changed since the repair)."""


def restore_outcome(write: WriteRewrite, current: bytes | None) -> RestoreOutcome:
    """What undo does with one rewritten write, from its bytes now."""
    state = write.state(current)
    if state == "as_rewritten":
        return "restored"
    return "claimed" if state == "as_read" else "moved_on"


def restoring(
    writes: Sequence[WriteRewrite], current: Sequence[bytes | None]
) -> tuple[list[RestoreOutcome], list[WriteRewrite]]:
    """What undo does with one checkpoint's rewritten writes, from their bytes now: the
    outcome of each, in order, and the reversed rewrites to apply (those `restored`)."""
    outcomes = [restore_outcome(w, b) for w, b in zip(writes, current, strict=True)]
    back = [w.reversed() for w, o in zip(writes, outcomes, strict=True) if o == "restored"]
    return outcomes, back
