"""What one load met in the stored bytes: the decode failures and the lost types.

A load (`watching_load()`) opens notes in a contextvar; the serializer proxy
(`moved.MovedTypesSerializer`) writes into them as the inner saver decodes. A type
that is not in LangGraph's safe set is named by LangGraph's own decode (its serde
events, where it has them), so a clean load costs one contextvar look per blob;
only such a type is looked at further: lost when its module cannot be found here,
or when LangGraph imported its module and the class is not in it.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..compatibility import features
from . import events
from .finders import module_findable
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
def meeting_types(blob: bytes) -> Iterator[set[TypeName]]:
    """The types outside LangGraph's safe set that the decode run in the block meets
    in `blob`: told by LangGraph's decode where it has serde events, else read from
    the bytes (one more pass, on older LangGraph only)."""
    met: set[TypeName] = set()
    if not features.HAS_SERDE_EVENTS:
        yield met
        met.update(_unsafe_named(blob))
        return
    with events.hearing(events.MET, lambda e: met.add((str(e.get("module")), str(e.get("name"))))):
        yield met


def _unsafe_named(blob: bytes) -> set[TypeName]:
    try:
        named = named_types(blob)
    except UndecodableBytes:
        return set()
    return {(n[0], n[1]) for n in named if n not in SAFE_TYPES and n[:2] not in SAFE_TYPES}


def why_lost(named: TypeName) -> str | None:
    """Why a type cannot be rebuilt here, or None when it can (as far as is known
    without importing: a module LangGraph did not import is not looked into)."""
    module, name = named
    if not module_findable(module):
        return f"module {module!r} is not found here"
    loaded = sys.modules.get(module)
    if loaded is not None and not hasattr(loaded, name):
        return f"module {module!r} has no {name!r}"
    return None


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
