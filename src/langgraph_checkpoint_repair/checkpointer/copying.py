"""The wrapper's `copy_thread` and `acopy_thread` where the inner saver class has none
and the package writes its store's rows (PostgreSQL, SQLite): the whole thread copied
inside the store in one transaction (`stores.copying`), which the Agent Server's thread
copy calls instead of re-inserting each checkpoint through `aput`."""

from __future__ import annotations

import asyncio
from typing import Any


def copy_thread(self: Any, source_thread_id: str, target_thread_id: str) -> None:
    """Copy every checkpoint, write and blob of a thread to a new thread: the copy reads
    the same and goes its own way."""
    from ..stores.pruners import is_async, pruner_for

    saver = self.saver
    if is_async(saver):  # as LangGraph's async savers do: on the saver's own loop
        copied = self.acopy_thread(str(source_thread_id), str(target_thread_id))
        asyncio.run_coroutine_threadsafe(copied, saver.loop).result()
        return
    pruner_for(saver).copy_thread(str(source_thread_id), str(target_thread_id))


async def acopy_thread(self: Any, source_thread_id: str, target_thread_id: str) -> None:
    """The async twin of `copy_thread`."""
    from ..stores.pruners import pruner_for

    pruner = pruner_for(self.saver, asynchronous=True)
    await pruner.copy_thread(str(source_thread_id), str(target_thread_id))


OWN_COPIES = {"copy_thread": copy_thread, "acopy_thread": acopy_thread}
