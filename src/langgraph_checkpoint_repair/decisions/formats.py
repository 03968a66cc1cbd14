"""The one rule of every write: keep to the formats the thread's own rows already use.

A thread's rows say who wrote them: the serializer type of each value (`msgpack` from
LangGraph, `json` from LangGraph.js, `null`, `empty`, `bytes`...) and the scheme of
its channel versions (LangGraph writes strings, LangGraph.js integers). A checkpoint
the command appends is written by the saver it opened, whose own format is known
before anything is written: the type its serializer gives a list of messages (or
LangGraph.js's `json` where the saver writes LangGraph.js's rows) and the type of the
next version it counts. A write goes ahead only where the thread's rows already hold
that type and count versions that way, and hold no type this command does not know;
otherwise the thread is reported and left alone: the application would fail on a row
it never wrote. Pure: the stores read the types, the runner asks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import HumanMessage

from ..decoding.integrity import Finding
from ..js.rows import is_js_version

KNOWN_TYPES = frozenset({"msgpack", "json", "null", "empty", "bytes", "bytearray", "pickle"})
"""The serializer types LangGraph and LangGraph.js write (`empty`: PostgreSQL's blob row
of a channel without a value), each also under an encrypting serializer's suffix
(`msgpack+aes`)."""

Scheme = Literal["integer", "string", "mixed"]


@dataclass(frozen=True)
class RowFormat:
    """The formats of a thread's rows, or of the rows a saver would write."""

    types: frozenset[str] | None
    """Serializer types; None where a saver shows no rows (known through its API only)."""
    versions: Scheme | None
    """How channel versions are counted; None where there are none."""


def version_scheme(versions: Iterable[Any]) -> Scheme | None:
    """`integer` (LangGraph.js), `string` (LangGraph), `mixed`, or None for none."""
    kinds: set[Scheme] = {"integer" if is_js_version(v) else "string" for v in versions}
    if len(kinds) > 1:
        return "mixed"
    return next(iter(kinds), None)


def stored_format(types: Iterable[str] | None, checkpoint: Mapping[str, Any]) -> RowFormat:
    """The format of a thread whose rows hold `types` and whose head is `checkpoint`."""
    found = None if types is None else frozenset(types)
    return RowFormat(found, version_scheme((checkpoint.get("channel_versions") or {}).values()))


def written_format(saver: Any, checkpoint: Mapping[str, Any]) -> RowFormat:
    """What `saver` writes on top of `checkpoint`: the scheme of its next version, and
    `json` where it writes LangGraph.js's rows for such a head, else the type its
    serializer gives a list of messages."""
    versions = (checkpoint.get("channel_versions") or {}).values()
    scheme = version_scheme(versions)
    if scheme == "mixed":
        return RowFormat(None, "mixed")
    current = max(versions, default=None)
    following = version_scheme([saver.get_next_version(current, None)])
    if following == "integer" and getattr(saver, "writes_langgraph_js", False):
        return RowFormat(frozenset({"json"}), following)
    type_, _ = saver.serde.dumps_typed([HumanMessage("")])
    return RowFormat(frozenset({type_}), following)


def foreign_format(stored: RowFormat, written: RowFormat) -> str | None:
    """Why writing `written` on a thread stored as `stored` would change its format;
    None when the write keeps to the formats its rows already use."""
    if stored.versions == "mixed":
        return "its checkpoint counts channel versions both as integers and as strings"
    if stored.versions and written.versions and stored.versions != written.versions:
        return (
            f"its channel versions are {stored.versions}s ({_writer(stored.versions)}); "
            f"this saver would write {written.versions}s"
        )
    if stored.types is None or written.types is None:
        return None
    unknown = {t for t in stored.types - written.types if t.partition("+")[0] not in KNOWN_TYPES}
    if unknown:
        return f"its rows hold serializer type {_names(unknown)}, unknown here"
    new = written.types - stored.types
    if stored.types and new:
        return f"its rows hold {_names(stored.types)}; a repair would write {_names(new)}"
    return None


def why_foreign(
    saver: Any, checkpoint: Mapping[str, Any], types: Iterable[str] | None
) -> str | None:
    """Why `saver` must not write on top of `checkpoint`, whose thread's rows hold the
    serializer `types` (None: a saver that shows no rows); None when it may."""
    return foreign_format(stored_format(types, checkpoint), written_format(saver, checkpoint))


def format_finding(
    saver: Any, checkpoint: Mapping[str, Any], types: Iterable[str] | None
) -> Finding | None:
    """`why_foreign` as the finding a run and `show` report on the head (`foreign_format`)."""
    reason = why_foreign(saver, checkpoint, types)
    return None if reason is None else Finding("foreign_format", "", error=reason)


def _writer(scheme: str) -> str:
    return "as LangGraph.js writes them" if scheme == "integer" else "as LangGraph writes them"


def _names(types: Iterable[str]) -> str:
    return ", ".join(repr(t) for t in sorted(types))
