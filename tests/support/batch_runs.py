"""Run the batch job through the sync or async API, as the store dictates."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from langgraph_checkpoint_repair.batch import (
    RunReport,
    UndoReport,
    arepair_threads,
    aundo_run,
    repair_threads,
    undo_run,
)
from tests.support.seeding import config
from tests.support.stores import Store


async def run_repair(store: Store, **settings: Any) -> RunReport:
    """A run that, unless told otherwise, does not wait for threads to go idle."""
    settings.setdefault("min_idle", timedelta(0))
    if store.is_async:
        return await arepair_threads(store.saver, **settings)
    return repair_threads(store.saver, **settings)


async def run_undo(store: Store, run_id: str) -> UndoReport:
    if store.is_async:
        return await aundo_run(store.saver, run_id)
    return undo_run(store.saver, run_id)


async def all_checkpoints(store: Store) -> list[tuple[str, str, str]]:
    """Every stored checkpoint key, in every namespace (to prove nothing is deleted)."""
    tuples = await store.list(store.saver, None)
    keys = {
        (
            t.config["configurable"]["thread_id"],
            t.config["configurable"].get("checkpoint_ns", ""),
            t.config["configurable"]["checkpoint_id"],
        )
        for t in tuples
    }
    return sorted(keys)


async def head_messages(store: Store, thread_id: str, ns: str = "") -> list[Any]:
    tup = await store.get_tuple(store.saver, config(thread_id, ns))
    assert tup is not None
    return list(tup.checkpoint["channel_values"]["messages"])
