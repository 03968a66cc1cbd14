"""What the installed LangGraph offers, found once at import time by feature, not by version.

Users run LangGraph 1.0.x to 1.2.x. Delta channels (`DeltaChannel`,
`_DeltaSnapshot`, `get_delta_channel_history`) ship with langgraph 1.2 and
langgraph-checkpoint 4; `Overwrite` with langgraph 1.1 (0.6 on some lines);
the msgpack allowlist with langgraph-checkpoint 4.0.1. Every module that needs
one of them checks the flag and reaches the feature's names through this
module (`features.DeltaChannel`) only on a path the flag opens, so the rest of
the package imports and works on the oldest supported versions.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph.message import REMOVE_ALL_MESSAGES

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
    from langgraph.types import Overwrite as Overwrite
except ImportError:  # langgraph < 1.1
    HAS_OVERWRITE = False
else:
    HAS_OVERWRITE = True


def replace_all_messages(messages: Sequence[BaseMessage]) -> Any:
    """A state update that replaces a message channel's whole list with `messages`.

    `Overwrite` where LangGraph has it: every message channel honours it, delta
    channels included. Older LangGraph has no delta channels, and its
    `add_messages` clears the list at a `REMOVE_ALL_MESSAGES` marker.
    """
    if HAS_OVERWRITE:
        return Overwrite(list(messages))
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, for messages that name it."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
