"""Which half of the saver API (sync, async) a saver implements, known from its class or,
for a saver that defines its sync methods only to refuse, from one read."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

SYNC_API = ("get_tuple", "list", "put")
ASYNC_API = ("aget_tuple", "alist", "aput")


def implements(saver: BaseCheckpointSaver[Any], api: tuple[str, ...]) -> bool:
    """True when the saver's class defines every method of `api` (SYNC_API or ASYNC_API)
    itself, rather than inheriting the base class's NotImplementedError."""
    return all(
        getattr(type(saver), name, None) is not getattr(BaseCheckpointSaver, name) for name in api
    )


PROBE_CONFIG: Any = {"configurable": {"thread_id": "langgraph-repair-probe", "checkpoint_ns": ""}}
"""A thread read once to see whether a saver's sync methods work (any id would do)."""


def refuses_sync(saver: BaseCheckpointSaver[Any]) -> bool:
    """True when the saver implements the async API and its sync methods, though
    defined, raise NotImplementedError (some savers define them only to refuse,
    e.g. langgraph-checkpoint-plainredis's AsyncRedisSaver): one read of a thread
    tells. Any other outcome, an error included, leaves the choice to the class."""
    if not implements(saver, ASYNC_API):
        return False
    try:
        saver.get_tuple(PROBE_CONFIG)
    except NotImplementedError:
        return True
    except Exception:
        return False
    return False
