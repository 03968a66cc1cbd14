"""Proving a delta channel's stored seeds from the rows before them.

LangGraph reads a delta channel from its nearest stored seed (a `_DeltaSnapshot` or a
plain value) and the writes since, and every later step builds on what it read: a seed
stored wrong is committed for good. The rows before a seed prove what it should hold:
its parent's value and the writes saved on the parent, replayed with the reducer
(batching-invariant, so a whole span of writes replays in one call). Walking the
chain from the oldest checkpoint, each seed is compared with that replay:

- a seed that differs is `delta_value_diverged`, and the replay goes on from the
  proven value (a later seed that holds it, a repair's, ends what was found);
- a seed stored as a list holding one list of messages (how older Redis savers and
  AgentCore stored a `_DeltaSnapshot`) is `delta_seed_flattened`: its inner list is
  the value;
- where there is no proof, the seed is taken as stored: the chain's first checkpoint,
  an update or a copy whose parent has another child (the parent's writes may be that
  child's), writes that are not messages.

Where a thread forked, `lineage` hands each checkpoint only the writes that built its
child on the chain (`branches`): a fork that copies its parent, and the graph's own
steps beside an update, are proven without the other branch's writes.

A repair this package wrote holds the proven value, repaired: it ends what was found.
An undo of one puts the wrong value back: the proof goes on from the proven value.
An update or fork that snapshots a branch its parent's writes do not hold (LangGraph
saves no writes for an update on a checkpoint already built on) is recognised by what
it kept: every message of the parent's value that no write removes. Only a seed that
lost such messages is called diverged there. A fork that copies its parent holds the
parent's value (and what a `Command` it ran with wrote), never a message only the
other branch's writes hold: LangGraph.js's PostgreSQL saver keys a snapshot by its
version alone, so such a fork can load its sibling's (langgraphjs#2737).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from ..codes import DivergenceCode
from .channels import _is_remove_all, _parts, rebuild_messages, snapshot_value

NOT_STORED: Any = object()
"""A checkpoint that stores no value for the channel: LangGraph replays through it."""
FORKING_SOURCES = frozenset({"update", "fork"})
"""Metadata sources of checkpoints that may snapshot writes their parent does not hold."""
TOLD_APART = frozenset({"loop", "input"})
"""Sources of a fork's children whose writes are told apart from an update's
(`branches.writes_toward`)."""


@dataclass(frozen=True)
class Link:
    """One checkpoint on the chain, as the proof needs it."""

    checkpoint_id: str
    stored: Any
    """The channel's stored value (`NOT_STORED` for none), as loaded."""
    writes: Sequence[Any]
    """The channel's pending writes saved on this checkpoint, `(task, channel, value)`
    in LangGraph's replay order: what built its child on the chain."""
    children: int = 1
    """Checkpoints of the namespace that name this one as their parent."""
    source: str | None = None
    """Its metadata's `source` (`loop`, `update`, `fork`, `input`)."""
    written_by: str | None = None
    """What kind of checkpoint of this package's it is (`repair`, `undo`), if one."""
    copies_parent: bool = False
    """A fork that copies its parent's value (`branches.copies_its_parent`)."""
    others: Sequence[Any] = ()
    """The channel's writes saved on this checkpoint that built another child."""


@dataclass(frozen=True)
class Divergence:
    """A stored seed that is not what its rows prove."""

    code: DivergenceCode
    checkpoint_id: str
    stored: Any
    """The seed as stored (a flattened one with its outer list)."""
    proven: list[BaseMessage]


@dataclass(frozen=True)
class Proof:
    """The head's value as its rows prove it, and the seeds found wrong on the way;
    `value` is None when the channel does not hold messages (nothing proven)."""

    value: list[BaseMessage] | None
    divergences: tuple[Divergence, ...] = ()


def prove(chain: Sequence[Link]) -> Proof:
    """Walk `chain` (oldest first, the head last) and prove each stored seed."""
    walk = _Walk()
    for parent, link in zip([None, *chain[:-1]], chain, strict=True):
        if not walk.step(parent, link):
            return Proof(None)
    value = walk.value_after()
    return Proof(value, tuple(walk.found)) if value is not None else Proof(None)


class _Walk:
    """The replay so far: the last value taken (`base`) and the writes since."""

    def __init__(self) -> None:
        self.base: list[BaseMessage] | None = None
        self.since: list[Any] = []
        self.found: list[Divergence] = []
        self.repaired: list[Divergence] = []
        """What the last repair of ours on the chain fixed: an undo of it that stores
        anything else than the proof put the wrong value back."""

    def value_after(self, dropped: int = 0) -> list[BaseMessage] | None:
        """The value `base` and the writes since give, but for the last `dropped`."""
        history: Any = {"writes": self.since[: len(self.since) - dropped]}
        if self.base is not None:
            history["seed"] = self.base
        return rebuild_messages(history)

    def step(self, parent: Link | None, link: Link) -> bool:
        """Take `link` into the replay; False when its values are not messages."""
        if link.stored is NOT_STORED:
            self.since.extend(link.writes)
            return True
        seed = seed_list(link.stored)
        if seed is None:
            return False
        taken = self._judged(parent, link, seed)
        if taken is None:
            return False
        self.base, self.since = taken, list(link.writes)
        return True

    def _judged(
        self, parent: Link | None, link: Link, seed: list[BaseMessage]
    ) -> list[BaseMessage] | None:
        """The value to go on from at a stored seed: the proven one where they differ."""
        flattened = seed is not snapshot_value(link.stored)
        if link.written_by == "repair":  # it stores the proven value, repaired
            self.repaired, self.found = self.found, []
            return seed
        if link.written_by == "undo" and self.found:
            return self.value_after()
        if parent is None or not _told_apart(parent, link):
            return self._noted(flattened, link, seed, seed)
        expected = self.value_after()  # the parent's writes are the last ones since
        if expected is None:
            return None
        if same_messages(seed, expected):
            self.found.clear()  # a later seed holds the proven value: the head reads it
            return self._noted(flattened, link, seed, seed)
        if self._right_otherwise(parent, link, seed, expected):
            return self._noted(flattened, link, seed, seed)
        self.found.append(
            Divergence("delta_value_diverged", link.checkpoint_id, link.stored, expected)
        )
        return expected

    def _noted(
        self, flattened: bool, link: Link, seed: list[BaseMessage], taken: list[BaseMessage]
    ) -> list[BaseMessage]:
        if flattened:
            self.found.append(
                Divergence("delta_seed_flattened", link.checkpoint_id, link.stored, seed)
            )
        return taken

    def _right_otherwise(
        self, parent: Link, link: Link, seed: list[BaseMessage], expected: list[BaseMessage]
    ) -> bool:
        """A seed other than the replay that is right all the same: a copy holding no
        message only the other branch wrote (a `Command`'s writes are its own), or an
        update or fork that kept its branch. Never an undo that put a proof back."""
        if link.copies_parent:
            return not holds_any(seed, parent.others, expected)
        if link.written_by == "undo" and self.repaired:
            return False
        return self._kept_its_branch(parent, link, seed)

    def _kept_its_branch(self, parent: Link, link: Link, seed: list[BaseMessage]) -> bool:
        """An update or fork whose seed keeps every message of its parent's value that
        the parent's writes do not remove: a branch of its own, not a loss."""
        if link.source not in FORKING_SOURCES:
            return False
        before = self.value_after(len(parent.writes))  # the parent's own value
        if before is None:
            return False
        removed = removed_ids(parent.writes)
        if removed is None:
            return True  # the parent's writes clear the channel: nothing had to be kept
        kept = {message.id for message in seed}
        return all(m.id in kept or m.id in removed for m in before)


def _told_apart(parent: Link, link: Link) -> bool:
    """Whether the writes that built `link` are known: its parent has no other child, or
    `link` is a child whose writes are told apart from its siblings' (`branches`)."""
    return parent.children == 1 or link.copies_parent or link.source in TOLD_APART


def seed_list(stored: Any) -> list[BaseMessage] | None:
    """The list of messages a stored seed holds (a flattened seed's inner list); None
    when it holds something else."""
    value = snapshot_value(stored)
    if not isinstance(value, list):
        return None
    if is_flattened(value):
        return list(value[0])
    return value if all(isinstance(item, BaseMessage) for item in value) else None


def is_flattened(value: Any) -> bool:
    """A list holding one non-empty list of messages: a snapshot stored flattened."""
    return (
        type(value) is list
        and len(value) == 1
        and type(value[0]) is list
        and bool(value[0])
        and all(isinstance(item, BaseMessage) for item in value[0])
    )


def holds_any(
    seed: Sequence[BaseMessage], writes: Sequence[Any], kept: Sequence[BaseMessage]
) -> bool:
    """Whether `seed` holds a message `writes` made that `kept` does not hold."""
    made = {m.id for _, _, value in writes for m in _messages_in(value) if m.id}
    made -= {m.id for m in kept}
    return any(m.id in made for m in seed)


def _messages_in(value: Any) -> list[BaseMessage]:
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, BaseMessage)]


def removed_ids(writes: Sequence[Any]) -> set[str] | None:
    """The message ids `writes` remove; None when they clear or overwrite the channel."""
    removed: set[str] = set()
    for _, _, value in writes:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, BaseMessage):
                return None  # an Overwrite or a shape of its own: anything may go
            if item.type == "remove":
                if _is_remove_all(item, _parts().remove_all):
                    return None
                removed.add(str(item.id))
    return removed


def same_messages(stored: Sequence[BaseMessage], proven: Sequence[BaseMessage]) -> bool:
    """Whether a seed holds the proven messages. Ids a replay made up for messages
    written without one differ from read to read, so a pair differing only by id is
    the same message."""
    if len(stored) != len(proven):
        return False
    return all(a == b or _same_but_id(a, b) for a, b in zip(stored, proven, strict=True))


def _same_but_id(a: BaseMessage, b: BaseMessage) -> bool:
    return type(a) is type(b) and a.model_copy(update={"id": None}) == b.model_copy(
        update={"id": None}
    )
