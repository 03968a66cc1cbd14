"""`inventory_types` and its async twin: every type a store's threads name, before an
application turns strict msgpack on (`docs/how-to/unreadable-threads.md`). Reads only; builds and
imports nothing a stored name says, except the types the operator allowed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ..decoding.finders import Status, type_status
from ..decoding.names import UndecodableBytes, named_types, type_text
from ..decoding.strict import SAFE_METHODS, SAFE_TYPES
from ..stores import astore_for, store_for
from ..stores.stored_values import ThreadBlobs

NEEDS_LISTING: tuple[Status, ...] = ("allowed", "refused", "lost")
"""Statuses whose types an application must list before strict msgpack: every type
outside LangGraph's own safe set. A lost type is one whose module is not found where
the command runs, which may be only because the application's code is elsewhere."""


@dataclass(frozen=True)
class TypeCount:
    """One stored type: how many threads hold it, and whether it can be built here."""

    type_name: tuple[str, ...]
    threads: int
    status: Status

    def to_json(self) -> dict[str, Any]:
        return {"type": type_text(self.type_name), "threads": self.threads, "status": self.status}


@dataclass
class TypeInventory:
    """What `langgraph-repair types` prints."""

    types: list[TypeCount] = field(default_factory=list)
    threads_scanned: int = 0
    values_undecodable: int = 0
    """Stored values whose bytes do not decode (`scan` names them)."""

    @property
    def allowed_msgpack_modules(self) -> list[tuple[str, str]]:
        """The list an application passes to LangGraph's serializer to keep building
        the types its store holds once strict msgpack is on."""
        return sorted(
            (t.type_name[0], t.type_name[1])
            for t in self.types
            if t.status in NEEDS_LISTING and len(t.type_name) == 2
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "types": [count.to_json() for count in self.types],
            "allowed_msgpack_modules": [list(pair) for pair in self.allowed_msgpack_modules],
        }


class _Tally:
    """Threads per type, a page at a time. Pages come in thread order, so a thread cut
    by a page's end (its namespaces on two pages) is only met again first thing."""

    def __init__(self) -> None:
        self.threads: Counter[tuple[str, ...]] = Counter()
        self.scanned = 0
        self.undecodable = 0
        self._last: tuple[str, set[tuple[str, ...]]] | None = None

    def add(self, page: ThreadBlobs) -> None:
        for thread_id, blobs in page:
            names = self._names(blobs)
            if self._last is not None and self._last[0] == thread_id:
                names -= self._last[1]
                self._last[1].update(names)
            else:
                self.scanned += 1
                self._last = (thread_id, names)
            self.threads.update(names)

    def _names(self, blobs: list[bytes]) -> set[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        for blob in blobs:
            try:
                found |= named_types(blob)
            except UndecodableBytes:
                self.undecodable += 1
        return found

    def inventory(self, allowed: Iterable[tuple[str, str]]) -> TypeInventory:
        trusted = frozenset(allowed)
        safe = SAFE_TYPES | SAFE_METHODS
        types = [
            TypeCount(name, count, type_status(name, safe, trusted))
            for name, count in sorted(self.threads.items(), key=lambda item: (-item[1], item[0]))
        ]
        return TypeInventory(types, self.scanned, self.undecodable)


def inventory_types(
    saver: BaseCheckpointSaver[Any],
    *,
    all_checkpoints: bool = False,
    allowed: Iterable[tuple[str, str]] = (),
) -> TypeInventory:
    """Every type named in the heads of `saver`'s threads (channel values and pending
    writes; `all_checkpoints` for the whole history), how many threads hold each, and
    its status: `safe`, `allowed` (in `allowed` and importable), `refused` or `lost`.
    Writes nothing. Needs a store whose bytes can be read (PostgreSQL, SQLite)."""
    tally = _Tally()
    for page in store_for(saver).type_pages(all_checkpoints):
        tally.add(page)
    return tally.inventory(allowed)


async def ainventory_types(
    saver: BaseCheckpointSaver[Any],
    *,
    all_checkpoints: bool = False,
    allowed: Iterable[tuple[str, str]] = (),
) -> TypeInventory:
    """The async twin of `inventory_types`."""
    tally = _Tally()
    async for page in astore_for(saver).type_pages(all_checkpoints):
        tally.add(page)
    return tally.inventory(allowed)
