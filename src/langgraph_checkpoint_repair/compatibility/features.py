"""What the installed LangGraph offers, found by feature, not by version.

Users run LangGraph 1.0.x to 1.2.x. Delta channels (`DeltaChannel`,
`_DeltaSnapshot`, `get_delta_channel_history`) ship with langgraph 1.2 and
langgraph-checkpoint 4; the msgpack allowlist with langgraph-checkpoint 4.0.1;
task statuses read from writes with langgraph 1.2.13. Every module that needs
one of them checks the probe and reaches the feature's names through this module
(`features.delta_parts().channel`) only on a path the probe opens, so the rest of
the package imports and works on the oldest supported versions.

The probes of `langgraph.checkpoint` run at import: the savers import it anyway.
Those of LangGraph's graph runtime (channels, reducers, task statuses) import
`langgraph.pregel` and LangChain's tracers, which a `langgraph-repair --help` or a
scan must not pay for; they run at their first call, once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

DELTA_SNAPSHOT: type[Any] | None = None
"""`_DeltaSnapshot`, the stored seed of a delta channel, where langgraph-checkpoint has one."""
try:
    from langgraph.checkpoint.base import writes_sort_key as writes_sort_key
    from langgraph.checkpoint.serde.types import _DeltaSnapshot as _DeltaSnapshot
except ImportError:  # langgraph-checkpoint < 4
    pass
else:
    DELTA_SNAPSHOT = _DeltaSnapshot


@dataclass(frozen=True)
class DeltaParts:
    """LangGraph's own pieces for rebuilding a delta channel as it replays one."""

    channel: type[Any]
    """`DeltaChannel`"""
    messages_reducer: Callable[[list[Any], list[Any]], list[Any]]
    """`_messages_delta_reducer`"""
    get_overwrite: Callable[[Any], tuple[bool, Any]]
    """`_get_overwrite`: whether a write is an `Overwrite`, and its value"""
    remove_all: str
    """`REMOVE_ALL_MESSAGES`: the id of the `RemoveMessage` that clears the channel"""


@functools.cache
def delta_parts() -> DeltaParts | None:
    """LangGraph's delta channel pieces, or None where langgraph < 1.2 or
    langgraph-checkpoint < 4 has no delta channels."""
    if DELTA_SNAPSHOT is None or not hasattr(BaseCheckpointSaver, "get_delta_channel_history"):
        return None
    try:
        from langgraph.channels.binop import _get_overwrite
        from langgraph.channels.delta import DeltaChannel
        from langgraph.graph.message import REMOVE_ALL_MESSAGES, _messages_delta_reducer
    except ImportError:
        return None
    return DeltaParts(DeltaChannel, _messages_delta_reducer, _get_overwrite, REMOVE_ALL_MESSAGES)


def has_delta_channels() -> bool:
    return delta_parts() is not None


HAS_MSGPACK_ALLOWLIST = (
    "allowed_msgpack_modules" in inspect.signature(JsonPlusSerializer.__init__).parameters
)
"""JsonPlusSerializer takes `allowed_msgpack_modules` (strict when given) and lists the
types it builds anyway in `SAFE_MSGPACK_TYPES` (langgraph-checkpoint 4.0.1 on)."""
if HAS_MSGPACK_ALLOWLIST:
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_METHODS as SAFE_MSGPACK_METHODS
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_TYPES as SAFE_MSGPACK_TYPES

try:
    from langgraph.checkpoint.serde import jsonplus as _jsonplus
    from langgraph.checkpoint.serde.event_hooks import (
        register_serde_event_listener as register_serde_event_listener,
    )
except ImportError:  # langgraph-checkpoint without serde events
    HAS_SERDE_EVENTS = False
else:
    HAS_SERDE_EVENTS = HAS_MSGPACK_ALLOWLIST and hasattr(_jsonplus, "emit_serde_event")
"""LangGraph's serializer reports each type its allowlist refuses, as it decodes, to the
listeners registered with `register_serde_event_listener`."""


@functools.cache
def has_task_statuses() -> bool:
    """LangGraph reads each task's status from its writes (langgraph 1.2.13 on): a task
    with a result is done even when it had raised an interrupt. Before that, the
    interrupt stays pending next to it."""
    try:
        from langgraph.pregel._task_status import read_task_statuses  # noqa: F401
    except ImportError:
        return False
    return True


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, for messages that name it."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
