"""Rolling back a run of the application (`batch.rollback`), on the four savers whose rows
the package deletes, sync and async: real graphs, each run carrying its id in its
config as the Agent Server's runs do. The last run taken back leaves each thread
reading as before it (a waiting thread asks again, a delta thread rebuilds the same
messages), and goes on; another thread's and another run's rows are untouched; undo
puts every row back. A run a later run built on keeps what that run needs."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph.channels.delta", reason="delta channels need langgraph 1.2")

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch import arollback_runs, rollback_runs
from langgraph_checkpoint_repair.batch.pruning import PruneReport
from langgraph_checkpoint_repair.batch.report import UnknownRun
from tests.support.delta_agents import REDUCERS, delta_state
from tests.support.pruning import (
    PRUNE_KINDS,
    Chat,
    PrunedStore,
    plain_chat,
    pruned_store,
    seen,
    stored_rows,
    thread,
    undo,
)


def run(thread_id: str, run_id: str) -> RunnableConfig:
    """A run's config as the Agent Server builds it."""
    return {
        "configurable": {"thread_id": thread_id, "run_id": run_id},
        "metadata": {"run_id": run_id, "graph_id": "agent", "assistant_id": "a-1"},
    }


def asking(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"approved: {interrupt('approve?')}")]}

    builder = StateGraph(Chat)
    builder.add_node("chat", lambda s: {"messages": [AIMessage("a reply")]})
    builder.add_node("ask", ask)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


def delta_chat(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    """A chat over a delta `messages` channel that snapshots rarely: each run's rows
    are a chain the next run's head rebuilds its messages from."""
    builder = StateGraph(delta_state(REDUCERS["langgraph"], every=50))
    builder.add_node("chat", lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}")]})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


async def rollback(store: PrunedStore, runs: list[str], **settings: Any) -> PruneReport:
    if store.is_async:
        return await arollback_runs(store.saver, runs, **settings)
    return rollback_runs(store.saver, runs, **settings)


def rows_of(store: PrunedStore, thread_id: str) -> dict[str, list[Any]]:
    return {
        table: [row for row in rows if row[0] == thread_id]
        for table, rows in stored_rows(store.reader).items()
    }


def said(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


@pytest.mark.parametrize("kind", PRUNE_KINDS)
async def test_the_last_run_taken_back_reads_as_before_it_goes_on_and_undoes(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with pruned_store(kind, tmp_path, request) as store:
        waiting, delta = asking(store.saver), delta_chat(store.saver)
        other = plain_chat(store.saver)
        await store.invoke(waiting, said("go"), run("asking", "r1"))
        asked = await seen(store, waiting, thread("asking"))
        await store.invoke(waiting, Command(resume="yes"), run("asking", "r2"))
        await store.invoke(delta, said("one"), run("delta", "r3"))
        first = await seen(store, delta, thread("delta"))
        await store.invoke(delta, said("two"), run("delta", "r4"))
        await store.invoke(other, said("hello"), run("other", "r5"))
        after_runs, others = stored_rows(store.reader), rows_of(store, "other")

        looked = await rollback(store, ["r2", "r4"], dry_run=True)
        assert stored_rows(store.reader) == after_runs
        report = await rollback(store, ["r2", "r4"])

        assert report.to_json() | {"run_id": "", "archived": False} == looked.to_json() | {
            "run_id": "", "dry_run": False, "archived": False
        }  # fmt: skip
        assert report.threads_pruned == 2 and report.archived and report.threads_built_on == 0
        assert await seen(store, waiting, thread("asking")) == asked
        assert asked[1:3] == (("ask",), [(asked[2][0][0], "approve?")])
        assert await seen(store, delta, thread("delta")) == first
        assert rows_of(store, "other") == others
        await undo(store, report.run_id)
        assert stored_rows(store.reader) == after_runs

        await rollback(store, ["r2", "r4"])
        await store.invoke(waiting, Command(resume="no"), run("asking", "r6"))
        await store.invoke(delta, said("three"), run("delta", "r7"))
        answered = await seen(store, waiting, thread("asking"))
        went_on = await seen(store, delta, thread("delta"))
    assert [m[1] for m in answered[0]["messages"]] == ["go", "a reply", "approved: no"]
    assert [m[1] for m in went_on[0]["messages"]] == ["one", "reply 1", "three", "reply 3"]


@pytest.mark.parametrize("kind", PRUNE_KINDS)
async def test_a_run_a_later_delta_run_built_on_keeps_its_rows(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    async with pruned_store(kind, tmp_path, request) as store:
        delta = delta_chat(store.saver)
        await store.invoke(delta, said("one"), run("delta", "r1"))
        await store.invoke(delta, said("two"), run("delta", "r2"))
        before, rows = await seen(store, delta, thread("delta")), stored_rows(store.reader)

        report = await rollback(store, ["r1"])
        wrapped = PatchingCheckpointer(store.saver)
        if store.is_async:
            await wrapped.adelete_for_runs(["r1"])
        else:
            wrapped.delete_for_runs(["r1"])

        assert report.skipped == {"built_on": 1} and report.threads_built_on == 1
        assert stored_rows(store.reader) == rows
        assert await seen(store, delta, thread("delta")) == before
    assert "rollback left thread 'delta' as it was: a later run's checkpoints need" in caplog.text


@pytest.mark.parametrize("kind", PRUNE_KINDS)
async def test_a_plain_run_a_later_run_descends_from_goes_and_the_later_reads_the_same(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    told: list[Any] = []
    async with pruned_store(kind, tmp_path, request) as store:
        chat = plain_chat(store.saver)
        await store.invoke(chat, said("one"), run("chat", "r1"))
        await store.invoke(chat, said("two"), run("chat", "r2"))
        before = await seen(store, chat, thread("chat"))

        report = await rollback(store, ["r1"], on_thread=told.append)

        assert report.threads_pruned == 1 and report.deleted.rows["checkpoints"] == 3
        assert await seen(store, chat, thread("chat")) == before
        history = (
            [t.metadata["run_id"] for t in store.saver.list(thread("chat"))]
            if not (store.is_async)
            else [t.metadata["run_id"] async for t in store.saver.alist(thread("chat"))]
        )
    assert set(history) == {"r2"}
    assert told[0].detail.startswith("a later run's checkpoints descend from the run's")


@pytest.mark.parametrize("kind", PRUNE_KINDS)
async def test_an_unknown_run_is_refused_by_the_command_and_a_no_op_for_the_wrapper(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with pruned_store(kind, tmp_path, request) as store:
        chat = plain_chat(store.saver)
        await store.invoke(chat, said("one"), run("chat", "r1"))
        rows = stored_rows(store.reader)
        with pytest.raises(UnknownRun, match="no checkpoint of run 'r9' in this store"):
            await rollback(store, ["r9"])
        wrapped = PatchingCheckpointer(store.saver)
        if store.is_async:
            await wrapped.adelete_for_runs(["r9"])
            await wrapped.adelete_for_runs([])
        else:
            wrapped.delete_for_runs(["r9"])
            wrapped.delete_for_runs([])
        assert stored_rows(store.reader) == rows
        with pytest.raises(TypeError, match="not a str"):
            await rollback(store, "r1")  # type: ignore[arg-type]
        if store.is_async:
            await wrapped.adelete_for_runs(["r1"])
        else:
            wrapped.delete_for_runs(["r1"])
        assert stored_rows(store.reader) == {table: [] for table in rows}
