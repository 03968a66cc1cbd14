"""`prune --compact`: a delta thread gets each delta channel's snapshot under its head,
then is pruned behind it, so each namespace keeps at most two checkpoints. Plain
LangGraph (no wrapper) reads the thread the same, a head waiting on a human keeps its
id and its question, and `undo` puts every row back byte for byte."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from langgraph_checkpoint_repair.decisions.plan import DETAIL_KEY
from langgraph_checkpoint_repair.delta import COUNTERS_KEY
from langgraph_checkpoint_repair.retention.compact import COMPACT_KIND
from langgraph_checkpoint_repair.stores.pruners import pruner_for
from tests.retention.test_prune_delta_threads import talked
from tests.support.cli_runs import run_cli
from tests.support.delta_agents import REDUCERS, delta_chat, delta_state
from tests.support.metadata import SERVER, tagged
from tests.support.pruning import PrunedStore, prune, seen, stored_rows, thread, undo


def per_namespace(store: PrunedStore, thread_id: str) -> Counter[str]:
    return Counter(
        row[1] for row in stored_rows(store.reader)["checkpoints"] if row[0] == thread_id
    )


def head_id(store: PrunedStore, thread_id: str) -> str:
    return str(
        max(row[2] for row in stored_rows(store.reader)["checkpoints"] if row[0] == thread_id)
    )


def asking_chat(saver: Any) -> CompiledStateGraph[Any]:
    """Each turn: a reply, then a question to a human (an `interrupt()` inside a node, so
    the head holds the question as a pending write) over a delta `messages` channel."""

    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"approved: {interrupt('approve?')}")]}

    builder = StateGraph(delta_state(REDUCERS["deepagents"]))
    builder.add_node("chat", lambda state: {"messages": [AIMessage("a reply")]})
    builder.add_node("ask", ask)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


async def test_compact_keeps_a_delta_thread_in_two_checkpoints_read_the_same(
    store: PrunedStore,
) -> None:
    graph = await talked(store, "deep", 7)
    before = await seen(store, graph, thread("deep"))
    head = head_id(store, "deep")

    report = await prune(store, compact=True)

    assert report.threads_compacted == 1 and report.threads_pruned == 1
    assert per_namespace(store, "deep") == {"": 2}
    assert head_id(store, "deep") == head
    assert await seen(store, graph, thread("deep")) == before
    await store.invoke(graph, {"messages": [HumanMessage("and now?")]}, thread("deep"))
    assert len((await store.get_state(graph, thread("deep"))).values["messages"]) == 16
    again = await prune(store, compact=True)
    assert again.threads_compacted == 0  # its head's chain ends at the snapshot now


async def test_a_compacted_head_waiting_on_a_human_keeps_its_id_and_takes_the_answer(
    store: PrunedStore,
) -> None:
    graph = asking_chat(store.saver)
    config = thread("asking")
    for turn in range(4):
        await store.invoke(graph, {"messages": [HumanMessage(f"turn {turn}")]}, config)
        if turn < 3:
            await store.invoke(graph, Command(resume=f"yes {turn}"), config)
    before = await seen(store, graph, config)
    assert before[2][0][1] == "approve?"
    head = head_id(store, "asking")

    report = await prune(store, compact=True)

    assert report.threads_compacted == 1
    assert per_namespace(store, "asking") == {"": 2}
    assert head_id(store, "asking") == head
    assert await seen(store, graph, config) == before
    await store.invoke(graph, Command(resume="yes at last"), config)
    messages = (await store.get_state(graph, config)).values["messages"]
    assert messages[-1].content == "approved: yes at last"
    assert len(messages) == 12  # each turn: its question, a reply, the approval


async def test_undo_of_a_compacting_prune_puts_every_row_back(store: PrunedStore) -> None:
    graph = await talked(store, "back", 7)
    before = stored_rows(store.reader)
    report = await prune(store, compact=True)
    assert report.threads_compacted == 1

    await undo(store, report.run_id)

    assert stored_rows(store.reader) == before
    await store.invoke(graph, {"messages": [HumanMessage("on")]}, thread("back"))
    assert len((await store.get_state(graph, thread("back"))).values["messages"]) == 16


async def test_a_compacting_dry_run_writes_nothing_and_counts_what_a_run_deletes(
    store: PrunedStore,
) -> None:
    await talked(store, "deep", 7)
    before = stored_rows(store.reader)

    dry = await prune(store, compact=True, dry_run=True)

    assert stored_rows(store.reader) == before
    real = await prune(store, compact=True)
    assert dry.threads_compacted == real.threads_compacted == 1
    assert dry.deleted.rows == real.deleted.rows


class Killed(Exception):
    """A run stopped right after the snapshot was written, before the head moved onto it."""


async def test_a_compaction_stopped_after_its_snapshot_reads_the_same_and_a_rerun_finishes(
    store: PrunedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = await talked(store, "deep", 7)
    before = await seen(store, graph, thread("deep"))
    rows = per_namespace(store, "deep")[""]
    pruner = type(pruner_for(store.saver, asynchronous=store.is_async))

    def killed(*args: Any) -> Any:
        raise Killed

    with monkeypatch.context() as patched:
        patched.setattr(pruner, "repoint", killed)
        with pytest.raises(Killed):
            await prune(store, compact=True)

    assert per_namespace(store, "deep")[""] == rows + 1  # the snapshot, nobody points at it
    assert await seen(store, graph, thread("deep")) == before
    report = await prune(store, compact=True)
    assert report.threads_compacted == 1
    assert per_namespace(store, "deep") == {"": 2}
    assert await seen(store, graph, thread("deep")) == before


def test_compact_takes_no_keep_last(tmp_path: Any) -> None:
    done = run_cli(
        "prune", f"sqlite:///{tmp_path / 'threads.sqlite'}", "--compact", "--keep-last", "2"
    )
    assert done.returncode == 2
    assert "--compact" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "threads.sqlite").exists()


async def test_the_snapshot_and_the_head_keep_the_threads_metadata(store: PrunedStore) -> None:
    graph = delta_chat(store.saver)
    config = tagged("owned")
    for turn in range(7):
        await store.invoke(graph, {"messages": [HumanMessage(f"turn {turn}")]}, config)
    head = store.reader.get_tuple(thread("owned"))
    assert head is not None and SERVER.items() <= head.metadata.items()

    report = await prune(store, compact=True)

    assert report.threads_compacted == 1
    kept = {
        tup.config["configurable"]["checkpoint_id"]: tup
        for tup in store.reader.list(thread("owned"))
    }
    assert head.config["configurable"]["checkpoint_id"] in kept
    [snapshot] = [
        t for t in kept.values() if (t.metadata.get(DETAIL_KEY) or {}).get("kind") == COMPACT_KIND
    ]
    carried = {
        k: v for k, v in snapshot.metadata.items() if k not in ("step", "source", DETAIL_KEY)
    }
    assert carried == {
        k: v for k, v in head.metadata.items() if k not in ("step", "source", COUNTERS_KEY)
    }
    assert snapshot.metadata["step"] == head.metadata["step"] - 1
    assert COUNTERS_KEY not in snapshot.metadata  # it holds every delta channel whole
