"""What the installed LangGraph offers, found once at import time by feature, not by version.

Users run LangGraph 1.0.x to 1.2.x. Delta channels (`DeltaChannel`,
`_DeltaSnapshot`, `get_delta_channel_history`) ship with langgraph 1.2 and
langgraph-checkpoint 4; the msgpack allowlist with langgraph-checkpoint 4.0.1;
task statuses read from writes with langgraph 1.2.13. Every module that needs
one of them checks the flag and reaches the feature's names through this module
(`features.DeltaChannel`) only on a path the flag opens, so the rest of the
package imports and works on the oldest supported versions.
"""

from __future__ import annotations

import inspect
from importlib.metadata import PackageNotFoundError, version

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

try:
    from langgraph.channels.binop import _get_overwrite as _get_overwrite
    from langgraph.channels.delta import DeltaChannel as DeltaChannel
    from langgraph.checkpoint.base import writes_sort_key as writes_sort_key
    from langgraph.checkpoint.serde.types import _DeltaSnapshot as _DeltaSnapshot
    from langgraph.graph.message import _messages_delta_reducer as _messages_delta_reducer
except ImportError:  # langgraph < 1.2 or langgraph-checkpoint < 4
    HAS_DELTA_CHANNELS = False
else:
    HAS_DELTA_CHANNELS = hasattr(BaseCheckpointSaver, "get_delta_channel_history")

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

try:
    from langgraph.pregel._task_status import read_task_statuses as read_task_statuses
except ImportError:  # langgraph < 1.2.13
    HAS_TASK_STATUSES = False
else:
    HAS_TASK_STATUSES = True
"""LangGraph reads each task's status from its writes: a task with a result is done even
when it had raised an interrupt. Before that, the interrupt stays pending next to it."""


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, for messages that name it."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
