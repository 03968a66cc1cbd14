"""Looking before writing: one thread's repair previewed on real stores, the side-by-side
alignment, and tables that survive CJK text, tabs and very long ids."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from rich.cells import cell_len
from rich.console import Console

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.batch import ThreadNotFound, ThreadPreview, preview_thread
from langgraph_checkpoint_repair.cli.show import align, print_preview
from langgraph_checkpoint_repair.cli.tables import print_table
from langgraph_checkpoint_repair.compatibility.features import HAS_DELTA_CHANNELS
from tests.support.histories import ai, human, tool
from tests.support.seeding import Seeded, seed
from tests.support.stores import Store

Seeds = tuple[Store, Seeded, list[str]]


async def seed_broken_delta(store: Store) -> list[str]:
    """Broken delta-channel threads, where LangGraph has delta channels."""
    if not HAS_DELTA_CHANNELS:
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


def test_alignment_marks_what_the_repair_adds_drops_and_rewrites() -> None:
    history = [human("a"), tool("zz"), ai("a1", "c1", "c2"), human("b"), tool("c2")]
    placed = repair_messages(history).messages
    assert [row.mark for row in align(history, placed)] == [" ", "-", " ", "+", "+", " ", "-"]
    dropped = repair_messages(history, policy=RepairPolicy(dangling="drop_call")).messages
    rewritten = [row for row in align(history, dropped) if row.mark == "~"]
    assert [(row.before.id, row.after.id) for row in rewritten if row.before and row.after] == [
        ("a1", "a1")
    ]


def test_the_side_by_side_view_names_every_change() -> None:
    history = [human("a"), tool("zz"), ai("a1", "c1"), human("b")]
    result = repair_messages(history)
    preview = ThreadPreview("t-1", "", "cp-1", "messages", history, result.messages,
                            result.actions, (), "would_repair")  # fmt: skip
    out = io.StringIO()
    print_preview(preview, Console(file=out, width=240))
    text = out.getvalue()
    assert "[synthetic]" in text and "answers #c1" in text
    assert "orphan_dropped: call #zz" in text and "placeholder: call #c1" in text
    assert "a repair run would write these 2 change(s)" in text


@pytest.mark.parametrize("width", [40, 80, 120])
def test_tables_fit_the_width_whatever_the_cells_hold(width: int) -> None:
    rows = [
        ("线程-一二三四五六七八九十-スレッド", "ns\twith\ttabs", "placeholder:c1"),
        ("line\nbreak\rand\x07bell", "-", "moved:c2"),
        ("t" * 300, "-", "orphan_dropped:" + "x" * 90),
    ]
    out = io.StringIO()
    print_table(rows, out, header=("thread", "namespace", "actions"), width=width)
    lines = out.getvalue().splitlines()
    assert all(cell_len(line) <= width for line in lines)
    assert not any(c in out.getvalue() for c in "\t\r\x07")
    assert set("线程一二三四五六七八九十スレッド") <= set(out.getvalue())
    assert out.getvalue().count("t") >= 300
