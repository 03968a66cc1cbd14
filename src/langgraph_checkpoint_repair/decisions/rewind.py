"""Rewinding a thread whose head does not decode (`docs/how-to/unreadable-threads.md`,
`--rewind-unreadable`):
the pure part. The walk to the newest readable ancestor, the checkpoint that copies
it on top of the unreadable head, and the row copy that undoes it. No I/O: the
stores read the chain's rows, `batch.ancestors` loads the ancestors."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, copy_checkpoint

from ..delta import COUNTERS_KEY, as_snapshot, counters_after_snapshot
from ..delta.chains import MAX_CHAIN
from ..engine import RepairAction
from .ids import id_after
from .plan import DETAIL_KEY, RUN_KEY, Assessment, NewCheckpoint, carried_metadata, tuple_key

CHECKPOINT_CHANNEL = "__checkpoint__"
"""The channel a rewind's action is recorded under: it replaces the whole checkpoint."""
REWIND_KIND = "rewind"
"""`DETAIL_KEY`'s kind in a rewind checkpoint's metadata."""


@dataclass(frozen=True)
class Rung:
    """One checkpoint of a parent chain, as its row's columns show it (never decoded)."""

    checkpoint_id: str
    parent_id: str | None
    step: int | None
    """Its metadata's step where the store reads it without decoding, else None."""


def step_of(raw: Any) -> int | None:
    """A step read from stored metadata: a whole number, or None."""
    try:
        return int(str(raw)) if raw is not None else None
    except ValueError:
        return None


def rung_from(rows: Sequence[Sequence[Any]]) -> Rung | None:
    """A store's rung query's one row (id, parent id, step) as a `Rung`; None when the
    checkpoint is gone."""
    if not rows:
        return None
    checkpoint_id, parent_id, step = rows[0]
    return Rung(str(checkpoint_id), None if parent_id is None else str(parent_id), step_of(step))


class AncestorWalk:
    """The walk from an unreadable head to its newest readable ancestor, newest first.

    Stored rows can say anything: a parent is followed only while it is older than
    its child (every cycle breaks that order), and for at most `MAX_CHAIN` steps."""

    def __init__(self, head: Rung) -> None:
        self.head = head
        self.child = head
        self.passed_over = 1
        """Checkpoints the rewind skips: the head and each unreadable ancestor."""
        self.reason: str | None = None
        """Why no ancestor was found, once the walk ended without one."""

    def next_id(self) -> str | None:
        """The next ancestor to try; None (with a `reason`) when there is none."""
        parent = self.child.parent_id
        if parent is None:
            self.reason = "no_readable_ancestor"
        elif parent >= self.child.checkpoint_id or self.passed_over >= MAX_CHAIN:
            self.reason = "broken_chain"
        else:
            return parent
        return None

    def unreadable(self, rung: Rung | None) -> None:
        """The ancestor tried last does not decode: walk on from its row."""
        if rung is None:
            self.child = Rung(self.child.parent_id or "", None, None)
            self.reason = "missing_ancestor"
            return
        self.child = rung
        self.passed_over += 1

    def left_alone(self, reason: str) -> None:
        self.child = Rung(self.child.checkpoint_id, None, None)
        self.reason = reason

    def summary(self, ancestor_id: str | None) -> dict[str, Any]:
        """What the thread's report says of the rewind (`ThreadReport.rewind`)."""
        found: dict[str, Any] = {"rewound_to": ancestor_id, "passed_over": self.passed_over}
        return found if ancestor_id is not None else {**found, "reason": self.reason}


def rewind_assessment(found: Assessment, walk: AncestorWalk, ancestor_id: str) -> Assessment:
    """The unreadable head's assessment once a readable ancestor is found: a repair
    whose one action, `rewound`, names the ancestor and how many were passed over."""
    detail = f"to {ancestor_id}, passing over {walk.passed_over}"
    action = RepairAction("rewound", None, None, 0, detail)
    return Assessment(
        found.thread_id,
        found.checkpoint_ns,
        found.checkpoint_id,
        "repair",
        broken=False,
        actions={CHECKPOINT_CHANNEL: (action,)},
        findings=found.findings,
        rewind=walk.summary(ancestor_id),
    )


def left_unreadable(found: Assessment, walk: AncestorWalk) -> Assessment:
    """The unreadable head's assessment when no ancestor can be rewound to."""
    return Assessment(
        found.thread_id,
        found.checkpoint_ns,
        found.checkpoint_id,
        "unreadable",
        broken=False,
        findings=found.findings,
        rewind=walk.summary(None),
    )


def rewind_detail(head_id: str, ancestor_id: str, passed_over: int) -> dict[str, Any]:
    return {
        "kind": REWIND_KIND,
        "source_checkpoint_id": head_id,
        "rewound_to": ancestor_id,
        "passed_over": passed_over,
    }


def rewind_checkpoint(
    walk: AncestorWalk,
    ancestor: CheckpointTuple,
    next_version: Callable[[Any, None], Any],
    run_id: str,
    snapshots: Collection[str] = (),
) -> NewCheckpoint:
    """A checkpoint on top of the unreadable head holding the ancestor's channels.

    Every channel's version is advanced with the saver's scheme, so the saver stores
    each value anew (PostgreSQL keys blobs by channel and version); channels in
    `snapshots` are delta channels rebuilt on load and stored whole, as a repair
    stores them. The id sorts right after the head's, so application writes stay
    newer (`ids`)."""
    head = walk.head
    checkpoint = copy_checkpoint(ancestor.checkpoint)
    base_step = head.step if head.step is not None else int(ancestor.metadata.get("step", -1))
    step = base_step + 1
    checkpoint["id"] = id_after(head.checkpoint_id, step)
    checkpoint["ts"] = datetime.now(timezone.utc).isoformat()
    values = checkpoint["channel_values"]
    for name in snapshots:
        if name in values:
            values[name] = as_snapshot(values[name])
    current = max(checkpoint["channel_versions"].values(), default=None)
    new_versions = {}
    for name in checkpoint["channel_versions"]:
        current = next_version(current, None)
        checkpoint["channel_versions"][name] = new_versions[name] = current
    ancestor_id = tuple_key(ancestor)[2]
    own = {
        RUN_KEY: run_id,
        DETAIL_KEY: rewind_detail(head.checkpoint_id, ancestor_id, walk.passed_over),
        COUNTERS_KEY: counters_after_snapshot(ancestor.metadata, snapshots),
    }
    metadata = carried_metadata(ancestor.metadata, step, own)  # the head's does not decode
    thread_id, ns, _ = tuple_key(ancestor)
    config = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": head.checkpoint_id,
        }
    }
    return NewCheckpoint(config, checkpoint, metadata, new_versions)


def is_rewind(metadata: Mapping[str, Any]) -> bool:
    detail = metadata.get(DETAIL_KEY)
    return isinstance(detail, dict) and detail.get("kind") == REWIND_KIND


def undone_by_copy(metadata: Mapping[str, Any]) -> bool:
    """Whether a repair is undone by copying its source row as stored: a rewind (its
    source does not decode), or a `type_moved` repair (its source names a type that
    cannot be built here, so it cannot be written back from what a load gives)."""
    if is_rewind(metadata):
        return True
    detail = metadata.get(DETAIL_KEY)
    actions = detail.get("actions") if isinstance(detail, dict) else None
    kinds = [
        a.get("kind") for acts in (actions or {}).values() for a in acts if isinstance(a, dict)
    ]
    return bool(kinds) and all(kind == "type_moved" for kind in kinds)


@dataclass(frozen=True)
class RowCopy:
    """An undo of a rewind: the unreadable head's row copied, as stored, on top of the
    rewind checkpoint. Only the ids change; its metadata gains the undo's record
    where the store can add keys without decoding it."""

    thread_id: str
    checkpoint_ns: str
    source_id: str
    """The unreadable head whose row is copied."""
    parent_id: str
    """The rewind checkpoint the copy is written on."""
    checkpoint_id: str
    record: dict[str, Any]
    """The metadata keys added to the copy: the undo's run and what it undid."""

    def params(self) -> dict[str, Any]:
        """The copy statement's parameters (named, for PostgreSQL and SQLite alike)."""
        return {
            "thread_id": self.thread_id,
            "checkpoint_ns": self.checkpoint_ns,
            "source": self.source_id,
            "parent": self.parent_id,
            "new": self.checkpoint_id,
            "record": json.dumps(self.record),
        }


def undo_copy(rewind: CheckpointTuple, undo_run_id: str, undone_run: str) -> RowCopy | None:
    """The row copy restoring the unreadable head a rewind passed over; None when the
    rewind's metadata does not name it."""
    detail = rewind.metadata.get(DETAIL_KEY)
    source = detail.get("source_checkpoint_id") if isinstance(detail, dict) else None
    if not isinstance(source, str):
        return None
    thread_id, ns, rewind_id = tuple_key(rewind)
    step = step_of(rewind.metadata.get("step"))
    record = {
        RUN_KEY: undo_run_id,
        DETAIL_KEY: {"kind": "undo", "undo_of": undone_run, "repair_checkpoint_id": rewind_id},
    }
    new_id = id_after(rewind_id, (step or 0) + 1)
    return RowCopy(thread_id, ns, source, rewind_id, new_id, record)
