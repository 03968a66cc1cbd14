"""LangGraph's serde events, heard once for the whole process and handed to the decodes
of ours under way.

LangGraph tells its listeners, process-wide, when its msgpack decode refuses a type or
meets one outside its safe set. One listener is registered here, the first time a
decode of ours asks to hear; each of our decodes says, for the block it runs in (this
thread or task), which kinds of event it wants and what to do with each (`hearing`).
A decode that is not ours has no hearer, and its events are dropped.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..compatibility import features

Event = Mapping[str, Any]
Hearer = tuple[frozenset[str], Callable[[Event], None]]

REFUSED = frozenset({"msgpack_blocked", "msgpack_method_blocked"})
"""LangGraph refused to build a type (or call a method) it was not allowed to."""
MET = frozenset({"msgpack_unregistered_allowed", "msgpack_blocked"})
"""LangGraph met a type outside its safe set (built or not)."""
ALLOWED = frozenset({"msgpack_unregistered_allowed"})
"""LangGraph met a type outside its safe set that it was allowed to build."""

_hearers: contextvars.ContextVar[tuple[Hearer, ...]] = contextvars.ContextVar(
    "langgraph_repair_serde_hearers", default=()
)
_registering = threading.Lock()
_registered = False


def emit(event: Event) -> None:
    """Hand `event` to the hearers of the block under way: LangGraph's listener calls
    this, and so does our own decode where LangGraph has no events to send."""
    for kinds, note in _hearers.get():
        if event.get("kind") in kinds:
            note(event)


def listen() -> None:
    """Register `emit` with LangGraph, once per process, where it sends events."""
    global _registered
    if not features.HAS_SERDE_EVENTS:
        return
    with _registering:
        if not _registered:
            features.register_serde_event_listener(emit)
            _registered = True


@contextlib.contextmanager
def hearing(kinds: frozenset[str], note: Callable[[Event], None]) -> Iterator[None]:
    """Call `note` with each event of `kinds` the decodes run in the block meet."""
    listen()
    token = _hearers.set((*_hearers.get(), (kinds, note)))
    try:
        yield
    finally:
        _hearers.reset(token)


def event_name(event: Event) -> str:
    """The dotted name an event is about: module.Name, or module.Name.method."""
    parts = (event.get("module"), event.get("name"), event.get("method"))
    return ".".join(str(part) for part in parts if part is not None)
