"""Delta threads (deep agents keep `messages` in a DeltaChannel): LangGraph's own prune
refuses them and a hand-written cut empties them, silently; `prune` keeps each delta
channel's chain back to its seed, so the thread reads the same and goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver

from tests.support.agents import ToolBox
from tests.support.delta_agents import REDUCERS, delta_agent, delta_chat
from tests.support.fakes import calls, model
from tests.support.pruning import (
    PrunedStore,
    count_rows,
    execute,
    prune,
    seen,
    stored_rows,
    thread,
    undo,
)
from tests.support.stores import Store, open_store


async def talked(store: Store, thread_id: str, turns: int, reducer: str = "deepagents") -> Any:
    graph = delta_chat(store.saver, reducer)
    for turn in range(turns):
        await store.invoke(graph, {"messages": [HumanMessage(f"turn {turn}")]}, thread(thread_id))
    return graph


async def messages(store: PrunedStore, graph: Any, thread_id: str) -> list[Any]:
    return list((await store.get_state(graph, thread(thread_id))).values["messages"])


def keep_only_the_newest(store: PrunedStore, thread_id: str) -> None:
    """What users write by hand: every checkpoint but the newest deleted, with its writes."""
    newest = max(row[2] for row in stored_rows(store.reader)["checkpoints"] if row[0] == thread_id)
    writes = "checkpoint_writes" if isinstance(store.reader, PostgresSaver) else "writes"
    for table in ("checkpoints", writes):
        execute(
            store.reader,
            f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id <> ?",
            (thread_id, newest),
        )


async def test_the_brick_a_cut_by_hand_empties_a_delta_thread_without_an_error(
    store: PrunedStore,
) -> None:
    graph = await talked(store, "cut", 4)
    assert len((await store.get_state(graph, thread("cut"))).values["messages"]) == 8

    keep_only_the_newest(store, "cut")

    assert (await store.get_state(graph, thread("cut"))).values.get("messages", []) == []
    await store.invoke(graph, {"messages": [HumanMessage("hello?")]}, thread("cut"))
    assert len((await store.get_state(graph, thread("cut"))).values["messages"]) == 2  # stored


async def test_the_brick_langgraphs_own_prune_refuses_a_delta_thread(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with open_store("postgres", tmp_path, request) as pg:
        await talked(pg, "refused", 3)
        assert isinstance(pg.saver, PostgresSaver)
        with pytest.raises(NotImplementedError, match="DeltaChannel"):
            pg.saver.prune(["refused"], strategy="keep_latest")


@pytest.mark.parametrize("reducer", sorted(REDUCERS))
async def test_a_delta_thread_loses_rows_reads_the_same_and_goes_on(
    store: PrunedStore, reducer: str
) -> None:
    graph = await talked(store, "delta", 7, reducer)
    twin = await talked(store, "twin", 7, reducer)
    before = await seen(store, graph, thread("delta"))
    rows = count_rows(store.reader, "delta")["checkpoints"]

    report = await prune(store, threads=["delta"])

    assert report.threads_pruned == 1
    left = count_rows(store.reader, "delta")["checkpoints"]
    assert 1 < left < rows  # the head and its chain back to the last snapshot
    assert await seen(store, graph, thread("delta")) == before
    for config in (thread("delta"), thread("twin")):
        await store.invoke(graph, {"messages": [HumanMessage("and now?")]}, config)
    pruned = [(m.type, m.content) for m in await messages(store, graph, "delta")]
    assert pruned == [(m.type, m.content) for m in await messages(store, twin, "twin")]
    assert len(pruned) == 16


async def test_a_delta_agent_waiting_before_its_tools_keeps_the_call_and_runs_it(
    store: PrunedStore,
) -> None:
    replies = model("Hello.", calls(("get_weather", "c1"), city="Oslo"), "Sunny.")
    asking = delta_agent(replies, ToolBox(), store.saver, interrupt_before=["tools"])
    config = thread("waiting")
    await store.invoke(asking, {"messages": [HumanMessage("Hi")]}, config)
    await store.invoke(asking, {"messages": [HumanMessage("Weather in Oslo?")]}, config)
    before = await seen(store, asking, config)
    assert before[1] == ("tools",)

    await prune(store)

    assert await seen(store, asking, config) == before
    await store.invoke(asking, None, config)
    messages = (await store.get_state(asking, config)).values["messages"]
    assert [m.type for m in messages][-3:] == ["ai", "tool", "ai"]


async def test_undo_puts_a_delta_threads_rows_back_byte_for_byte(store: PrunedStore) -> None:
    graph = await talked(store, "back", 5)
    before = stored_rows(store.reader)
    report = await prune(store)

    await undo(store, report.run_id)

    assert stored_rows(store.reader) == before
    await store.invoke(graph, {"messages": [HumanMessage("on")]}, thread("back"))
    assert len((await store.get_state(graph, thread("back"))).values["messages"]) == 12


async def test_a_delta_thread_another_prune_cut_is_left_as_it_is(store: PrunedStore) -> None:
    await talked(store, "cut", 4)
    keep_only_the_newest(store, "cut")
    await talked(store, "whole", 4)
    before = [row for row in stored_rows(store.reader)["checkpoints"] if row[0] == "cut"]

    report = await prune(store)

    assert dict(report.skipped) == {"delta_seed_missing": 1}
    assert report.threads_pruned == 1  # the whole one
    assert [row for row in stored_rows(store.reader)["checkpoints"] if row[0] == "cut"] == before
