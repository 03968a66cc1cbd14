"""The pure part of writing a repair while other runs and the application write too.

A repair is planned on a head, then written. In between, another run may have
repaired the same head (`claimed`) or the application may have written on it
(`moved_on`); both leave the thread alone. An application write that lands
after the last look but before the repair is stored becomes the repair's
sibling and, with the repair's id sorting right after its source
(`ids.id_after`), stays the head: the repair is `superseded`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

WriteOutcome = Literal["repaired", "claimed", "moved_on", "superseded"]


class Planned(Protocol):
    """The head a write was planned on: a repair's planned, or the repair an undo restores."""

    @property
    def thread_id(self) -> str: ...
    @property
    def checkpoint_ns(self) -> str: ...
    @property
    def checkpoint_id(self) -> str: ...


class Written(Protocol):
    """What a write puts on the head: a checkpoint (`NewCheckpoint`) or a row copy."""

    @property
    def checkpoint_id(self) -> str: ...


@dataclass(frozen=True)
class Stored:
    """A checkpoint found next to a repair after writing it."""

    checkpoint_id: str
    parent_id: str | None
    run_id: str | None
    """The run named in its metadata, when a repair run wrote it."""


def thread_key(planned: Planned) -> tuple[str, str]:
    """(thread id, namespace): the parameters of a head query."""
    return (planned.thread_id, planned.checkpoint_ns)


def sibling_key(planned: Planned, new: Written) -> dict[str, str]:
    """The parameters of a query for the repair's siblings: other children of its source
    (all newer than the source, so an index range over the few newest checkpoints)."""
    return {
        "thread_id": planned.thread_id,
        "checkpoint_ns": planned.checkpoint_ns,
        "source": planned.checkpoint_id,
        "repair": new.checkpoint_id,
    }


def head_moved(head_id: str | None, planned: Planned, new: Written) -> WriteOutcome | None:
    """None while the head is still the one the repair was planned on; otherwise why not
    write: another run already wrote this very repair, or the thread moved on."""
    return head_left(head_id, planned, new.checkpoint_id)


def head_left(head_id: str | None, planned: Planned, repair_id: str | None) -> WriteOutcome | None:
    """`head_moved` for a repair that writes checkpoint `repair_id`, or none (a rewrite
    in place, whose head must still be the one it was planned on)."""
    if head_id == planned.checkpoint_id:
        return None
    return "claimed" if repair_id is not None and head_id == repair_id else "moved_on"


def settled(newer: Iterable[Stored], planned: Planned, new: Written, run_id: str) -> WriteOutcome:
    """What a written repair turned out to be, from the checkpoints newer than its source.

    Another run's repair of the same head has the same id: when that run's
    write replaced this one, the repair is theirs (`claimed`). Another child of
    the source is a concurrent application write, which is the head (`superseded`).
    """
    superseded = False
    for stored in newer:
        if stored.checkpoint_id == new.checkpoint_id:
            if stored.run_id != run_id:
                return "claimed"
        elif stored.parent_id == planned.checkpoint_id:
            superseded = True
    return "superseded" if superseded else "repaired"
