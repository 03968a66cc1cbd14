"""Findings about stored bytes (`docs/how-to/unreadable-threads.md`): a value that does not decode
(`undecodable`), a type this environment cannot rebuild (`lost_type`), text
PostgreSQL refuses to keep (`nul_text`). Pure: the stores hand over the bytes.

The first look (`suspect`) and the full inspection (`inspect_values`) read the
same bytes the same way; the first only says whether the second is worth it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..codes import FindingCode
from ..redact import one_line
from .finders import is_safe, type_status
from .names import OPTION, UndecodableBytes, named_types, type_text
from .nul import NUL
from .strict import SAFE_METHODS, SAFE_TYPES, StrictSerializer

WITHOUT_VALUE = frozenset({"null", "empty", "bytes", "bytearray"})
"""Stored types whose bytes are the value itself, or none: nothing to decode."""

Decode = Callable[[tuple[str, bytes]], Any]


@dataclass(frozen=True)
class StoredValue:
    """One value of a checkpoint as stored: a channel's, or a pending write's."""

    channel: str
    type: str | None
    blob: bytes | None
    task_id: str | None = None
    """The task of a pending write; None for a channel value."""
    idx: int | None = None

    @property
    def where(self) -> str:
        if self.task_id is None:
            return f"channel {self.channel!r}" if self.channel else "the checkpoint"
        return f"pending write of task {self.task_id!r} to channel {self.channel!r}"


@dataclass(frozen=True)
class Finding:
    """One thing wrong with one stored value."""

    code: FindingCode
    channel: str
    task_id: str | None = None
    type_name: str | None = None
    """`module:Name` where the finding names a type."""
    error: str | None = None
    """The serializer's one-line error, for `undecodable`; what happens, for the others."""
    node: str | None = None
    """The node a `node_missing` finding names."""

    @property
    def where(self) -> str:
        return StoredValue(self.channel, None, None, self.task_id).where

    def describe(self) -> str:
        """One line for a person: the code, where, and the type or the error."""
        detail = self.type_name or self.error
        return f"{self.code} in {self.where}" + (f": {detail}" if detail else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "channel": self.channel,
            "task_id": self.task_id,
            "type": self.type_name,
            "error": self.error,
            **({"node": self.node} if self.node is not None else {}),
        }


@dataclass(frozen=True)
class Trust:
    """What decides a type's status: LangGraph's safe set and the operator's allowed types."""

    safe: Collection[tuple[str, ...]]
    allowed: Collection[tuple[str, ...]] = ()

    def lost(self, named: tuple[str, ...]) -> bool:
        return type_status(named, self.safe, self.allowed) == "lost"

    def unknown(self, named: tuple[str, ...]) -> bool:
        return not is_safe(named, self.safe)


def trust_of(serde: SerializerProtocol) -> Trust:
    """What a store's serializer trusts: LangGraph's safe set, and with the command's
    strict serializer the types the operator allowed. A saver's own serializer may
    build more, but nothing stored is imported here for it."""
    allowed = serde.allowed if isinstance(serde, StrictSerializer) else frozenset()
    return Trust(SAFE_TYPES | SAFE_METHODS, allowed)


def inspect_values(
    values: Iterable[StoredValue], trust: Trust, decode: Decode, nul_matters: bool
) -> list[Finding]:
    """Every finding of a checkpoint's stored values. `decode` (the saver's own
    `loads_typed`) decides for the types this module does not read itself (an
    encrypted value, say); `nul_matters` where the store keeps text as PostgreSQL does."""
    findings: list[Finding] = []
    for value in values:
        findings += _inspect(value, trust, decode, nul_matters)
    return findings


def _inspect(
    value: StoredValue, trust: Trust, decode: Decode, nul_matters: bool
) -> Iterator[Finding]:
    if value.type is None or value.blob is None or value.type in WITHOUT_VALUE:
        return
    blob = bytes(value.blob)
    try:
        named = _names(value.type, blob, decode)
    except Exception as error:
        yield Finding("undecodable", value.channel, value.task_id, error=one_line(error))
        return
    for name in sorted(named):
        if trust.lost(name):
            yield Finding("lost_type", value.channel, value.task_id, type_name=type_text(name))
    if nul_matters and value.task_id is not None and value.type == "msgpack" and nul_in_text(blob):
        yield Finding("nul_text", value.channel, value.task_id)


def _names(type_: str, blob: bytes, decode: Decode) -> set[tuple[str, ...]]:
    """The types a value names (msgpack read here, nothing built); other kinds are
    decoded by the saver's serializer only to learn whether they decode."""
    if type_ == "msgpack":
        return named_types(blob)
    if type_ == "json":
        json.loads(blob)
        return set()
    decode((type_, blob))
    return set()


def nul_in_text(blob: bytes) -> bool:
    """A msgpack value that is text holding U+0000: PostgreSQL keeps such a channel
    value inline in its JSONB `checkpoint` column, and refuses U+0000 there."""
    try:
        value = ormsgpack.unpackb(blob, ext_hook=_nothing, option=OPTION)
    except Exception:
        return False
    return isinstance(value, str) and NUL in value


def _nothing(code: int, data: bytes) -> None:
    return None


def suspect(value: StoredValue, trust: Trust, decode: Decode, nul_matters: bool) -> bool:
    """The cheap first look: True when `inspect_values` may find something here."""
    if value.type is None or value.blob is None or value.type in WITHOUT_VALUE:
        return False
    blob = bytes(value.blob)
    if value.type != "msgpack":
        try:
            _names(value.type, blob, decode)
        except Exception:
            return True
        return False
    try:
        named = named_types(blob)
    except UndecodableBytes:
        return True
    if any(trust.unknown(name) for name in named):
        return True
    return nul_matters and value.task_id is not None and nul_in_text(blob)
