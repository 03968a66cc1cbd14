"""`prune --compact` with the application's graph: every delta channel gets its snapshot,
rebuilt by the graph's own reducer (a stock deep agent's `files` dict, an application's
bytes payload), proven before anything is deleted. The agent reads the same, goes on,
keeps its question, and undo puts every row back."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from typing import Annotated

from deepagents._messages_reducer import _messages_delta_reducer
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from tests.retention.test_prune_deep_agent_reasons import counts, write_files
from tests.retention.test_prune_delta_threads import talked
from tests.support.agents import ToolBox
from tests.support.delta_agents import deep_agent
from tests.support.fakes import calls, model
from tests.support.payload_graph import payload_for, worked
from tests.support.pruning import PrunedStore, prune, seen, stored_rows, thread, undo


def per_namespace(store: PrunedStore, thread_id: str) -> Counter[str]:
    rows = stored_rows(store.reader)["checkpoints"]
    return Counter(row[1] for row in rows if row[0] == thread_id)


async def next_file_lands(store: PrunedStore, thread_id: str, n: int) -> dict[str, Any]:
    """The deep agent writes one more file; its files then."""
    write = calls(("write_file", f"w{n}"), file_path=f"/f{n}.txt", content=f"file {n}")
    agent = deep_agent(model(write, "Done."), ToolBox(), store.saver)
    await store.invoke(agent, {"messages": [HumanMessage(f"Write file {n}.")]}, thread(thread_id))
    files: dict[str, Any] = (await store.get_state(agent, thread(thread_id))).values["files"]
    return files


async def test_a_deep_agents_messages_and_files_go_into_two_checkpoints(
    store: PrunedStore,
) -> None:
    agent = await write_files(store, "deep", 4)
    before = await seen(store, agent, thread("deep"))
    assert set(before[0]["files"]) == {f"/f{n}.txt" for n in range(4)}

    report = await prune(store, compact=True, graph=agent)

    assert report.skipped == {} and report.threads_compacted == report.threads_pruned == 1
    assert max(per_namespace(store, "deep").values()) <= 2
    assert await seen(store, agent, thread("deep")) == before
    files = await next_file_lands(store, "deep", 9)
    assert set(files) == {f"/f{n}.txt" for n in (0, 1, 2, 3, 9)}


async def test_a_bytes_payload_of_the_applications_own_is_compacted(store: PrunedStore) -> None:
    app = await worked(store, "work", 6)
    before = await seen(store, app, thread("work"))
    assert before[0]["payload"] == payload_for(11)

    report = await prune(store, compact=True, graph=app)

    assert report.skipped == {} and report.threads_compacted == 1
    assert per_namespace(store, "work") == {"": 2}
    assert await seen(store, app, thread("work")) == before
    await store.invoke(app, {"messages": [HumanMessage("on")]}, thread("work"))
    after = (await store.get_state(app, thread("work"))).values
    assert after["payload"] == payload_for(13) and len(after["messages"]) == 14


async def test_without_the_graph_a_channel_that_is_not_messages_is_left_with_its_reason(
    store: PrunedStore,
) -> None:
    app = await worked(store, "work", 3)
    rows = stored_rows(store.reader)

    report = await prune(store, compact=True)

    assert report.skipped == {"delta_not_compacted": 1} and report.threads_pruned == 0
    assert stored_rows(store.reader) == rows
    assert (await store.get_state(app, thread("work"))).values["payload"] == payload_for(5)


async def test_a_graph_without_the_channel_leaves_the_thread_as_it_was(
    store: PrunedStore,
) -> None:
    agent = await write_files(store, "deep", 2)
    rows = stored_rows(store.reader)
    chat = await talked(store, "chat", 1)  # its graph keeps `messages`, no `files`

    report = await prune(store, compact=True, graph=chat, threads=["deep"])

    assert report.skipped == {"delta_not_compacted": 1} and report.threads_scanned == 1
    now = stored_rows(store.reader)
    assert {table: [r for r in found if r[0] == "deep"] for table, found in now.items()} == rows
    assert set((await store.get_state(agent, thread("deep"))).values["files"]) == {
        "/f0.txt",
        "/f1.txt",
    }


async def test_the_dry_run_counts_and_reasons_equal_the_real_runs(store: PrunedStore) -> None:
    agent = await write_files(store, "deep", 3)
    await worked(store, "work", 3)  # the agent's graph has no `payload`: left, with a reason
    await talked(store, "chat", 4)
    rows = stored_rows(store.reader)

    dry = await prune(store, compact=True, graph=agent, dry_run=True)
    assert stored_rows(store.reader) == rows
    real = await prune(store, compact=True, graph=agent)

    assert counts(dry) == counts(real)
    assert real.threads_compacted == 2 and real.skipped == {"delta_not_compacted": 1}


async def test_a_thread_waiting_on_a_human_keeps_its_question_through_every_channel(
    store: PrunedStore,
) -> None:
    app = await worked(store, "asking", 4, asking=True)
    config = thread("asking")
    before = await seen(store, app, config)
    assert before[2][0][1] == "approve?"

    report = await prune(store, compact=True, graph=app)

    assert report.threads_compacted == 1 and per_namespace(store, "asking") == {"": 2}
    assert await seen(store, app, config) == before
    await store.invoke(app, Command(resume="yes at last"), config)
    values = (await store.get_state(app, config)).values
    assert values["messages"][-1].content == "approved: yes at last"
    assert values["payload"] == before[0]["payload"]


async def test_undo_puts_every_row_of_a_compacted_deep_agent_back(store: PrunedStore) -> None:
    agent = await write_files(store, "deep", 3)
    await worked(store, "work", 3)
    rows = stored_rows(store.reader)
    report = await prune(store, compact=True, graph=agent)
    assert report.threads_compacted == 1

    await undo(store, report.run_id)

    assert stored_rows(store.reader) == rows
    files = await next_file_lands(store, "deep", 7)
    assert set(files) == {"/f0.txt", "/f1.txt", "/f2.txt", "/f7.txt"}


async def test_a_value_the_store_cannot_keep_as_it_is_is_not_compacted(
    store: PrunedStore,
) -> None:
    """The proof on purpose: a reducer that returns a tuple, which the store gives back as
    a list; the snapshot does not rebuild the head, so it is taken back."""
    app = trail_graph(store.saver)
    for turn in range(3):
        await store.invoke(app, {"messages": [HumanMessage(f"turn {turn}")]}, thread("trail"))
    before = await seen(store, app, thread("trail"))
    assert before[0]["trail"] == (0, 2, 4)
    rows = stored_rows(store.reader)

    report = await prune(store, compact=True, graph=app)

    assert report.skipped == {"compact_unproven": 1} and report.threads_compacted == 0
    assert stored_rows(store.reader) == rows
    assert await seen(store, app, thread("trail")) == before


class TrailState(TypedDict):
    messages: Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer)]
    trail: Annotated[tuple[int, ...], DeltaChannel(lambda s, w: (*s, *w))]


def trail_graph(saver: Any) -> Any:
    """Delta messages, and a delta channel whose reducer keeps a tuple."""
    builder = StateGraph(TrailState)
    builder.add_node(
        "step", lambda s: {"messages": [AIMessage("ok")], "trail": len(s["messages"]) - 1}
    )
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder.compile(checkpointer=saver)
