"""How many heads a run will look at, where the store can say so in one query."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ..stores import astore_for, store_for
from .options import RunOptions


def count_heads(saver: BaseCheckpointSaver[Any], options: RunOptions) -> int | None:
    """The number of (thread, namespace) heads `options` selects; None when unknown
    without listing the store (any saver but PostgreSQL and SQLite)."""
    return store_for(saver).count_heads(options.selection)


async def acount_heads(saver: BaseCheckpointSaver[Any], options: RunOptions) -> int | None:
    """The async twin of `count_heads`."""
    return await astore_for(saver).count_heads(options.selection)
