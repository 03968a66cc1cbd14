"""Looking before writing: one thread's repair previewed on real stores, as the engine
would repair it, without writing anything."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair import repair_messages
from langgraph_checkpoint_repair.batch import ThreadNotFound, preview_thread
from langgraph_checkpoint_repair.compatibility.features import has_delta_channels
from tests.support.seeding import Seeded, seed
from tests.support.stores import Store

Seeds = tuple[Store, Seeded, list[str]]


async def seed_broken_delta(store: Store) -> list[str]:
    """Broken delta-channel threads, where LangGraph has delta channels."""
    if not has_delta_channels():
        return []
    from tests.batch.test_delta_batch import seed_delta

    return (await seed_delta(store)).broken


@pytest.fixture(params=["sqlite", "postgres"])
async def seeded_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Seeds]:
    if request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            store = Store(saver, is_async=False)
            yield store, await seed(store, prefix="plain-"), await seed_broken_delta(store)
    else:
        with PostgresSaver.from_conn_string(request.getfixturevalue("pg_uri")) as pg:
            pg.setup()
            store = Store(pg, is_async=False)
            yield store, await seed(store, prefix="plain-"), await seed_broken_delta(store)


async def test_preview_matches_the_engine_on_every_kind_of_thread(seeded_store: Seeds) -> None:
    store, seeded, delta = seeded_store
    for thread_id in [*seeded.of("bricked", "orphan", "misplaced", "clean"), *delta]:
        preview = preview_thread(store.saver, thread_id)
        result = repair_messages(preview.before)
        assert preview.after == result.messages
        assert preview.actions == result.actions
        assert preview.outcome == ("would_repair" if result.changed else "clean")
        assert preview.in_flight_calls == ()
    waiting = preview_thread(store.saver, seeded.of("in_flight")[0])
    assert waiting.in_flight_calls == ("c1",)
    assert waiting.after == waiting.before and waiting.outcome == "clean"
    sub = preview_thread(store.saver, seeded.of("subgraph")[0], checkpoint_ns="researcher:1")
    assert sub.outcome == "would_repair"
    with pytest.raises(ThreadNotFound, match="no thread 'nope'"):
        preview_thread(store.saver, "nope")


async def test_preview_writes_nothing(seeded_store: Seeds) -> None:
    store, seeded, _ = seeded_store
    before = [t.config for t in store.saver.list(None)]
    preview_thread(store.saver, seeded.of("bricked")[0])
    assert [t.config for t in store.saver.list(None)] == before
