"""What one load met in the stored bytes: the decode failures and the lost types.

A load (`watching_load()`) opens notes in a contextvar; the serializer proxy
(`load_watcher.LoadWatcher`) writes into them as the inner saver decodes. A type
that is not in LangGraph's safe set is named by LangGraph's own decode (its serde
events, where it has them), so a clean load costs one contextvar look per blob;
only such a type is looked at further, by the rule `types` and the findings use
(`finders.lost_reason`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..compatibility import features
from . import events
from .finders import is_safe, lost_reason
from .names import TypeName, UndecodableBytes, channel_blobs, named_types
from .strict import SAFE_TYPES


@dataclass
class LostType:
    """A type a decoded blob named that cannot be rebuilt here, and what the decode gave."""

    type: TypeName
    reason: str
    value: Any
    """The decoded value of the blob that named it, to find where it sits."""
    blob: bytes


@dataclass(frozen=True)
class Undecodable:
    """Stands in, during a lenient reread, for a stored value that does not decode."""

    error: BaseException


@dataclass
class LoadNotes:
    """What the serializer met during one load."""

    lenient: bool = False
    """Hand back `Undecodable` for a value that does not decode instead of raising."""
    failures: list[BaseException] = field(default_factory=list)
    lost: list[LostType] = field(default_factory=list)

    def caused(self, error: BaseException) -> BaseException | None:
        """The decode failure noted here that `error` is or was raised from, if any."""
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if any(current is failure for failure in self.failures):
                return current
            current = current.__cause__ or current.__context__
        return None


_notes: contextvars.ContextVar[LoadNotes | None] = contextvars.ContextVar(
    "langgraph_repair_load_notes", default=None
)


@contextlib.contextmanager
def watching_load(lenient: bool = False) -> Iterator[LoadNotes]:
    """Notes of what the decodes run in the block (in this thread or task) meet."""
    notes = LoadNotes(lenient=lenient)
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def current_notes() -> LoadNotes | None:
    """The notes of the load under way here, if one is watched."""
    return _notes.get()


@contextlib.contextmanager
def meeting_types(blob: bytes) -> Iterator[dict[TypeName, bool]]:
    """The types outside LangGraph's safe set that the decode run in the block meets
    in `blob`, each with whether LangGraph was allowed to build it: told by LangGraph's
    decode where it has serde events, else read from the bytes (one more pass, on
    older LangGraph only, which does not say what it allowed)."""
    met: dict[TypeName, bool] = {}
    if not features.HAS_SERDE_EVENTS:
        yield met
        met.update(dict.fromkeys(_unsafe_named(blob), False))
        return

    def note(event: events.Event) -> None:
        named = (str(event.get("module")), str(event.get("name")))
        met[named] = met.get(named, False) or event.get("kind") in events.ALLOWED

    with events.hearing(events.MET, note):
        yield met


def _unsafe_named(blob: bytes) -> set[TypeName]:
    try:
        named = named_types(blob)
    except UndecodableBytes:
        return set()
    return {(n[0], n[1]) for n in named if not is_safe(n, SAFE_TYPES)}


def why_lost(named: TypeName, allowed: bool) -> str | None:
    """Why a type the load met cannot be rebuilt here (`finders.lost_reason`), or None
    when it can; `allowed`: LangGraph was allowed to build it."""
    return lost_reason(named, {named} if allowed else ())


def channels_naming(checkpoint_blob: bytes, named: TypeName) -> list[str]:
    """The channels of a whole stored checkpoint (as SQLite stores one) whose value
    names `named`, read without building anything."""
    blobs = channel_blobs(checkpoint_blob) or {}
    return [channel for channel, blob in blobs.items() if named in _names_or_none(blob)]


def _names_or_none(blob: bytes) -> set[tuple[str, ...]]:
    try:
        return named_types(blob)
    except UndecodableBytes:
        return set()
