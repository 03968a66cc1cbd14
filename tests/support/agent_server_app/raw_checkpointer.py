"""A raw (unwrapped) saver for the same store, to compare the server with and without repair."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from langgraph_checkpoint_repair.targets import aopen_saver


@contextlib.asynccontextmanager
async def checkpointer() -> AsyncIterator[Any]:
    target = os.environ["LANGGRAPH_REPAIR_TARGET"]
    if target == ":memory:":
        yield InMemorySaver()
        return
    async with aopen_saver(target, setup=True) as saver:
        yield saver
