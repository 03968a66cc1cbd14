"""What `undo` decides for each thread a run repaired, apart from any I/O: whether it is
put back and how (a checkpoint restoring the channels as they were, or a copy of the
row a rewind passed over), or why it is left alone (a `Skip`). The batch job's undo
reads and writes (`batch.undo`) and keeps the report (`batch.restoring`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..delta import is_snapshot, snapshot_value
from .formats import why_foreign
from .plan import (
    DETAIL_KEY,
    RUN_KEY,
    TOOL_KEYS,
    NewCheckpoint,
    checkpoint_on_top,
    undo_detail,
)
from .races import head_moved
from .rewind import RowCopy, undo_copy


@dataclass(frozen=True)
class RepairEntry:
    """One thread a run repaired: where it started and the checkpoint the run wrote."""

    thread_id: str
    checkpoint_ns: str
    source_checkpoint_id: str
    repair_checkpoint_id: str
    moved_work: bool = field(default=False, compare=False)
    """The repair moved the head's work off a renamed node (`drift`), so its undo puts
    pending writes (PostgreSQL's audit says; elsewhere the checkpoint does, on load)."""


def entry_from_metadata(tup: CheckpointTuple, run_id: str) -> RepairEntry | None:
    """Read a repair checkpoint's own record of what it repaired; None unless the
    checkpoint itself names `run_id` (a saver's `list(filter=...)` may not filter)."""
    detail = tup.metadata.get(DETAIL_KEY)
    if tup.metadata.get(RUN_KEY) != run_id:
        return None
    if not isinstance(detail, dict) or detail.get("kind") not in ("repair", "rewind"):
        return None
    configurable = tup.config["configurable"]
    return RepairEntry(
        configurable["thread_id"],
        configurable.get("checkpoint_ns", ""),
        detail["source_checkpoint_id"],
        configurable["checkpoint_id"],
    )


class At(NamedTuple):
    """A checkpoint of a thread: the head an undo is planned on (`races.Planned`)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str


def repair_at(entry: RepairEntry) -> At:
    """The head an undo is written on: the run's repair checkpoint."""
    return At(entry.thread_id, entry.checkpoint_ns, entry.repair_checkpoint_id)


MoveBack = Callable[
    [CheckpointTuple, CheckpointTuple, Any, Mapping[str, Any], str], "NewCheckpoint | str | None"
]
"""Puts back work a repair moved off a renamed node (`drift.writing.moved_back`): the
undo checkpoint, a sentence where the work cannot move back, or None for a repair
that moved no work."""


class Skip(NamedTuple):
    """Why a thread is left alone (`reason`), and where one helps, in a sentence."""

    reason: str
    detail: str | None = None


@dataclass(frozen=True)
class Undoing:
    """The undo in progress: its own run id, the run it undoes, and how work a repair
    moved is put back (the batch job hands `drift`'s rule in; none: nothing moved)."""

    run_id: str
    undo_of: str
    move_back: MoveBack | None = None


def copy_plan(
    undoing: Undoing,
    copies_rows: bool,
    entry: RepairEntry,
    head: CheckpointTuple,
    current_head_id: str | None,
    source_present: bool,
) -> RowCopy | Skip:
    """The copy of the unreadable head a rewind passed over, on top of the rewind; a
    `Skip` when the thread must be left alone, as `restore_plan` says, or when the
    store cannot copy a row as stored (`cannot_copy`)."""
    reason = _why_not_restore(undoing.undo_of, entry, head, head)
    if reason is None and not copies_rows:
        reason = "cannot_copy"
    if reason is not None:
        return Skip(reason)
    copy = undo_copy(head, undoing.run_id, undoing.undo_of)
    if copy is None or not source_present:
        return Skip("source_missing")
    moved = head_moved(current_head_id, repair_at(entry), copy)
    return copy if moved is None else Skip(moved)


def restore_plan(
    undoing: Undoing,
    saver: BaseCheckpointSaver[Any],
    entry: RepairEntry,
    found: tuple[CheckpointTuple | None, str | None, CheckpointTuple | None],
    types: frozenset[str] | None,
    refused: set[str],
) -> NewCheckpoint | Skip:
    """A checkpoint on top of the repair that puts back the channels as they were
    before it; a `Skip` when the thread must be left alone: `refused_type` when its
    read refused a stored type (writing plain data back would change it),
    `foreign_format` when the saver would write a format the thread's rows (of
    serializer `types`) do not use, `cannot_move_back` where moved work cannot go
    back. `found` is the repair checkpoint, the thread's current head id and the
    repair's source checkpoint."""
    head, current_head_id, source = found
    reason = _why_not_restore(undoing.undo_of, entry, head, source)
    if reason is None and refused:
        reason = "refused_type"
    if reason is not None:
        return Skip(reason)
    assert head is not None and source is not None
    foreign = why_foreign(saver, head.checkpoint, types)
    if foreign is not None:
        return Skip("foreign_format", foreign)
    restored = _restore(undoing, saver, head, source)
    if isinstance(restored, str):
        return Skip("cannot_move_back", restored)
    moved = head_moved(current_head_id, repair_at(entry), restored)
    return restored if moved is None else Skip(moved)


def _restore(
    undoing: Undoing,
    saver: BaseCheckpointSaver[Any],
    head: CheckpointTuple,
    source: CheckpointTuple,
) -> NewCheckpoint | str:
    """The undo checkpoint; for a re-targeting, a sentence where the work cannot move back.
    It carries the repair checkpoint's metadata, and the source's keys a repair made by
    an earlier release did not carry (`carried_metadata`)."""
    undo = undo_detail(undoing.undo_of, head.checkpoint["id"])
    metadata: Any = {k: v for k, v in source.metadata.items() if k not in TOOL_KEYS}
    head = head._replace(metadata={**metadata, **head.metadata})
    if undoing.move_back is not None:
        moved = undoing.move_back(head, source, saver.get_next_version, undo, undoing.run_id)
        if moved is not None:
            return moved
    detail: dict[str, Any] = head.metadata.get(DETAIL_KEY) or {}  # type: ignore[assignment]
    actions: Mapping[str, Any] = detail.get("actions", {})
    shown = source.checkpoint["channel_values"]
    values = {name: snapshot_value(shown[name]) for name in actions if name in shown}
    written = head.checkpoint["channel_values"]
    snapshots = [name for name in values if is_snapshot(written.get(name))]
    for name in _materialized(actions):  # back to a snapshot: no plain value is left
        values.setdefault(name, written[name])
        snapshots.append(name)
    return checkpoint_on_top(head, values, saver.get_next_version, undo, undoing.run_id, snapshots)


def _materialized(actions: Mapping[str, Any]) -> list[str]:
    """The channels a `materialize` wrote as plain values (action `materialized`)."""
    return [
        name
        for name, done in actions.items()
        if any(isinstance(a, Mapping) and a.get("kind") == "materialized" for a in done)
    ]


def _why_not_restore(
    run_id: str,
    entry: RepairEntry,
    head: CheckpointTuple | None,
    source: CheckpointTuple | None,
) -> str | None:
    if head is None:  # the run stopped between its audit record and its write
        return "not_written"
    if entry_from_metadata(head, run_id) != entry:  # trust the checkpoint, not the listing
        return "not_this_run"
    return "source_missing" if source is None else None
