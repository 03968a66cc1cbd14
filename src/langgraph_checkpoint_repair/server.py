"""The repair wrapper under a LangGraph Agent Server, as one line in `langgraph.json`:

    "checkpointer": {"path": "langgraph_checkpoint_repair.server.checkpointer"}

The server enters `checkpointer()` once at startup and uses the saver it
yields for every thread. The store comes from the environment:

    LANGGRAPH_REPAIR_TARGET     a TARGET as the CLI takes it (postgresql://...,
                                sqlite:///path, module:attr); else
    DATABASE_URI, POSTGRES_URI  the variables the server itself reads for its
                                database (":memory:", which `langgraph dev` sets,
                                means an in-memory saver)
    LANGGRAPH_REPAIR_POOL_SIZE  PostgreSQL pool size (default 10)
    LANGGRAPH_REPAIR_POLICY     RepairPolicy settings, comma-separated KEY=VALUE
                                (`lost_types=raise` among them)
    LANGGRAPH_REPAIR_CHANNELS   message channels to repair, comma-separated
                                (default: every channel holding messages)
    LANGGRAPH_REPAIR_MOVED_TYPES  classes stored under an old name, comma-separated
                                old.module:Old=new.module:New; loads build the new one

Each repair is logged by the `langgraph_checkpoint_repair` logger, so it shows in
the server's own log. For your own policy or `on_repair`, use `checkpointer_factory`
in a file of yours.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from .checkpointer import OnRepair, PatchingCheckpointer
from .decoding.names import type_text
from .decoding.rename import parse_moved
from .engine import RepairPolicy
from .engine.policy import policy_from_settings, split_settings
from .targets import TargetError, aopen_saver

logger = logging.getLogger("langgraph_checkpoint_repair.server")

TARGET_VARIABLES = ("LANGGRAPH_REPAIR_TARGET", "DATABASE_URI", "POSTGRES_URI")
MOVED_TYPES_ENV = "LANGGRAPH_REPAIR_MOVED_TYPES"
DEFAULT_POOL_SIZE = 10


def target_from(environ: Mapping[str, str]) -> str:
    """The store to open: the first of TARGET_VARIABLES that is set."""
    for name in TARGET_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            return value
    raise TargetError(f"no checkpoint store configured: set one of {', '.join(TARGET_VARIABLES)}")


def settings_from(environ: Mapping[str, str]) -> dict[str, Any]:
    """Pool size, policy, channels and moved types from the environment; a ValueError
    names a bad one."""
    pool = environ.get("LANGGRAPH_REPAIR_POOL_SIZE", str(DEFAULT_POOL_SIZE))
    if not pool.isdigit() or int(pool) < 1:
        raise ValueError(f"LANGGRAPH_REPAIR_POOL_SIZE must be a positive number, not {pool!r}")
    policy = environ.get("LANGGRAPH_REPAIR_POLICY", "")
    channels = environ.get("LANGGRAPH_REPAIR_CHANNELS", "")
    return {
        "pool_size": int(pool),
        "policy": policy_from_settings(split_settings(policy)),
        "channels": [c.strip() for c in channels.split(",") if c.strip()] or None,
        "moved_types": moved_types_from(environ.get(MOVED_TYPES_ENV, "")),
    }


def moved_types_from(value: str) -> dict[str, str]:
    """`old.mod:Old=new.mod:New, ...` as the `moved_types` mapping; a ValueError names a bad
    entry."""
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    try:
        moved = [parse_moved(entry) for entry in entries]
    except ValueError as error:
        raise ValueError(f"{MOVED_TYPES_ENV}: {error}") from None
    return {type_text(old): type_text(new) for old, new in moved}


@contextlib.asynccontextmanager
async def open_repairing_saver(
    target: str,
    *,
    policy: RepairPolicy | None = None,
    channels: Collection[str] | None = None,
    on_repair: OnRepair | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
    moved_types: Mapping[str, str] | None = None,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Open the async saver for `target`, set its tables up, yield it wrapped; close it after."""
    async with _open_inner(target, pool_size) as inner:
        yield PatchingCheckpointer(
            inner, policy=policy, channels=channels, on_repair=on_repair, moved_types=moved_types
        )


def _open_inner(target: str, pool_size: int) -> AbstractAsyncContextManager[Any]:
    if target == ":memory:":
        logger.warning("checkpoints are kept in memory only; set LANGGRAPH_REPAIR_TARGET")
        return contextlib.nullcontext(InMemorySaver())
    return aopen_saver(target, pool_size=pool_size, setup=True)


def checkpointer_factory(
    *,
    target: str | None = None,
    policy: RepairPolicy | None = None,
    channels: Collection[str] | None = None,
    on_repair: OnRepair | None = None,
    moved_types: Mapping[str, str] | None = None,
) -> Callable[[], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]:
    """A `checkpointer` for `langgraph.json` with your own settings; what you leave out
    comes from the environment, as for `checkpointer`."""

    @contextlib.asynccontextmanager
    async def configured() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        settings = settings_from(os.environ)
        async with open_repairing_saver(
            target or target_from(os.environ),
            policy=policy or settings["policy"],
            channels=channels if channels is not None else settings["channels"],
            on_repair=on_repair,
            pool_size=settings["pool_size"],
            moved_types=moved_types if moved_types is not None else settings["moved_types"],
        ) as saver:
            yield saver

    return configured


@contextlib.asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The Agent Server's checkpointer: the store named by the environment, wrapped."""
    async with checkpointer_factory()() as saver:
        yield saver
