"""Strict loading: stored bytes name types, and only trusted ones are built.

LangGraph's serializer stores an object as a msgpack extension naming its
module and class, and by default imports and calls whatever is named
(langgraph-checkpoint before 4.0.1 always; later ones with a warning). A store
the command opens from a URL holds bytes written by code it does not control,
so it loads through `StrictSerializer`: LangGraph's and LangChain's own types
(messages, Send, Interrupt, datetime, uuid, ...) and those the operator trusts
are built; anything else comes back as plain data and is recorded as refused.

Where LangGraph has its allowlist (`features.HAS_MSGPACK_ALLOWLIST`) the
building is LangGraph's own, strict; on older versions it is `_strict_hook`,
which builds what LangGraph builds, for trusted types only. Each blob is
decoded once: the refused names are noted as the decode meets them, from
LangGraph's own refusal events (`features.HAS_SERDE_EVENTS`) or from
`_strict_hook`. Only a LangGraph with its allowlist but no events gets a first
read that builds nothing (`refused_in`) to name them. The serializer keeps
every name it refused, and `refusals()` gives the names refused while a block
of code ran (one thread head's read), so that head can be left alone.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ..compatibility import features
from . import events
from .finders import lost_reason
from .names import (
    KW_ARGS,
    METHOD,
    NUMPY,
    OPTION,
    POS_ARGS,
    PYDANTIC_V1,
    PYDANTIC_V2,
    SINGLE_ARG,
    UndecodableBytes,
    ext_name,
    named_types,
)

ALLOW_TYPES_ENV = "LANGGRAPH_REPAIR_ALLOW_TYPES"


_MESSAGES = ("Human", "AI", "System", "Chat", "Tool", "Function")
_ADDRESSES = ("Address", "Interface", "Network")
_PATHS = ("Path", "PosixPath", "WindowsPath")
_LANGGRAPH_TYPES = (
    "Send", "Interrupt", "Command", "StateSnapshot", "PregelTask", "Overwrite", "TimeoutPolicy"
)  # fmt: skip
_OWN_TYPES: frozenset[tuple[str, ...]] = frozenset(
    {
        *(("datetime", name) for name in ("datetime", "date", "time", "timedelta", "timezone")),
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("collections", "deque"),
        *(("ipaddress", f"IPv{v}{kind}") for v in (4, 6) for kind in _ADDRESSES),
        *((module, name) for module in ("pathlib", "pathlib._local") for name in _PATHS),
        ("zoneinfo", "ZoneInfo"),
        ("re", "compile"),
        ("langchain_core.messages.base", "BaseMessage"),
        ("langchain_core.messages.base", "BaseMessageChunk"),
        *(
            (f"langchain_core.messages.{kind.lower()}", f"{kind}Message{chunk}")
            for kind in _MESSAGES
            for chunk in ("", "Chunk")
        ),
        ("langchain_core.messages.modifier", "RemoveMessage"),
        ("langchain_core.documents.base", "Document"),
        *(("langgraph.types", name) for name in _LANGGRAPH_TYPES),
        ("langgraph.store.base", "Item"),
        ("langgraph.store.base", "GetOp"),
    }
)  # fmt: skip
"""LangGraph's own safe list (langgraph-checkpoint 4.0.1), for versions that lack one."""

SAFE_TYPES: frozenset[tuple[str, ...]] = (
    frozenset(features.SAFE_MSGPACK_TYPES) if features.HAS_MSGPACK_ALLOWLIST else _OWN_TYPES
)
SAFE_METHODS: frozenset[tuple[str, ...]] = (
    frozenset(features.SAFE_MSGPACK_METHODS)
    if features.HAS_MSGPACK_ALLOWLIST
    else frozenset({("datetime", "datetime", "fromisoformat")})
)

_TYPE_NAME = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_]\w*")


def parse_allowed(texts: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`module:Name` strings as (module, name) pairs; a malformed one is a ValueError."""
    allowed = []
    for text in texts:
        text = text.strip()
        if not _TYPE_NAME.fullmatch(text):
            raise ValueError(f"not a type: {text!r} (write module:Name, e.g. my_app.state:Plan)")
        module, _, name = text.partition(":")
        allowed.append((module, name))
    return tuple(allowed)


def allowed_from_env(value: str | None) -> tuple[tuple[str, str], ...]:
    """The types `LANGGRAPH_REPAIR_ALLOW_TYPES` trusts (comma-separated module:Name)."""
    return parse_allowed(part for part in (value or "").split(",") if part.strip())


_watching: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "langgraph_repair_refusals", default=None
)


@contextlib.contextmanager
def refusals() -> Iterator[set[str]]:
    """The names of the types refused while the block runs (in this thread or task)."""
    found: set[str] = set()
    token = _watching.set(found)
    try:
        yield found
    finally:
        _watching.reset(token)


@contextlib.contextmanager
def _noting_refusals() -> Iterator[set[str]]:
    """The names refused by the decode that runs in the block (`events`)."""
    found: set[str] = set()
    with events.hearing(events.REFUSED, lambda event: found.add(events.event_name(event))):
        yield found


def refused_in(blob: bytes, allowed: frozenset[tuple[str, ...]]) -> set[str]:
    """The types a msgpack blob names that are not in `allowed`, found without
    importing or calling anything."""
    try:
        named = named_types(blob)
    except UndecodableBytes:  # the real load says what it is
        return set()
    return {".".join(n) for n in named if not _trusted(n, allowed)}


def _trusted(named: tuple[str, ...], allowed: frozenset[tuple[str, ...]]) -> bool:
    """Whether a named constructor is in `allowed`, or a named method among SAFE_METHODS."""
    return named in (allowed if len(named) == 2 else SAFE_METHODS)


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's serializer that builds only trusted types; see the module docstring.
    Writes are LangGraph's own, unchanged."""

    def __init__(self, allowed: Iterable[tuple[str, str]] = ()) -> None:
        extra = tuple(allowed)
        self.allowed: frozenset[tuple[str, ...]] = SAFE_TYPES | frozenset(extra)
        self.lost = frozenset(name for name in extra if lost_reason(name, extra) is not None)
        """Allowed types that do not import here: refused like untrusted ones, so that a
        head holding one is named and left alone instead of read as plain data."""
        buildable = tuple(name for name in extra if name not in self.lost)
        self.refused: set[str] = set()
        """Every type name this serializer refused to build, over its lifetime."""
        self._lock = threading.Lock()
        self._first_read = features.HAS_MSGPACK_ALLOWLIST and not features.HAS_SERDE_EVENTS
        """Whether refusals must be named by a read before LangGraph's decode."""
        if features.HAS_MSGPACK_ALLOWLIST:
            super().__init__(allowed_msgpack_modules=buildable)
            events.listen()
        else:
            super().__init__(__unpack_ext_hook__=_strict_hook(SAFE_TYPES | frozenset(buildable)))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """One decode, noting what it refuses (a first read only where it must)."""
        type_, blob = data
        if type_ != "msgpack":
            return super().loads_typed(data)
        if self._first_read:
            self._note(refused_in(blob, self.allowed - self.lost))
            return super().loads_typed(data)
        with _noting_refusals() as refused:
            value = super().loads_typed(data)
        self._note(refused)
        return value

    def _note(self, names: set[str]) -> None:
        if not names:
            return
        with self._lock:
            self.refused |= names
        watching = _watching.get()
        if watching is not None:
            watching |= names


def _strict_hook(allowed: frozenset[tuple[str, ...]]) -> Callable[[int, bytes], Any]:
    """An ext hook that builds what LangGraph's builds, for `allowed` types only;
    any other extension comes back as its plain arguments."""

    def hook(code: int, data: bytes) -> Any:
        try:
            inner = ormsgpack.unpackb(data, ext_hook=hook, option=OPTION)
        except Exception:
            return None
        named = ext_name(code, inner)
        if named is None:
            return _numpy(inner) if code == NUMPY else None
        if not _trusted(named, allowed):
            module, name, *method = map(str, named)
            blocked = {"kind": "msgpack_blocked", "module": module, "name": name}
            events.emit({**blocked, **({"method": method[0]} if method else {})})
            return inner[2]
        return _build(code, inner)

    return hook


def _build(code: int, inner: Any) -> Any:
    module, name, args = inner[0], inner[1], inner[2]
    try:
        found = getattr(importlib.import_module(module), name)
        if code == METHOD:
            return getattr(found, inner[3])(args)
        if code == SINGLE_ARG:
            return found(args)
        if code == POS_ARGS:
            return found(*args)
        if code == KW_ARGS:
            return found(**args)
        try:
            return found(**args)
        except Exception:
            construct = found.construct if code == PYDANTIC_V1 else found.model_construct
            return construct(**args)
    except Exception:
        return args if code in (PYDANTIC_V1, PYDANTIC_V2) else None


def _numpy(inner: Any) -> Any:
    try:
        import numpy

        dtype, shape, order, buffer = inner
        return numpy.frombuffer(buffer, dtype=numpy.dtype(dtype)).reshape(shape, order=order)
    except Exception:
        return None


class _BlockedNotice(logging.Filter):
    """Drops LangGraph's own log line for a type this package refused and names itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Blocked deserialization of %s.%s")


def quiet_langgraph_notices() -> None:
    """Keep refusals to one line each: ours (LangGraph logs its own on newer versions)."""
    logging.getLogger("langgraph.checkpoint.serde.jsonplus").addFilter(_BlockedNotice())
