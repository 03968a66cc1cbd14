"""`materialize` on every real saver: a delta thread's head stores no messages (or a
`_DeltaSnapshot`), which a reader without delta channels reads as nothing; the run
writes the whole value into a new head as a plain list, the delta graph reads the same
and goes on, a second run writes nothing, a dry run changes no row, and undo puts the
delta form back. Threads it must not write on are left as they were, with why."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from tests.batch.test_delta_diverged import TURNS, erased_thread, ids, read, write_turns
from tests.support.agents import ToolBox, react_agent
from tests.support.batch_runs import all_checkpoints, run_repair, run_undo
from tests.support.delta_agents import delta_agent
from tests.support.fakes import model
from tests.support.histories import ai, human
from tests.support.seeding import config
from tests.support.stores import Store

DELTA_TURNS = [*TURNS, [human("c")]]
"""Five updates: the head stores nothing for `messages` (a snapshot every three)."""


async def stored_messages(store: Store, thread_id: str) -> Any:
    """What the head stores for `messages`: what a reader without delta channels reads."""
    head = await store.get_tuple(store.saver, config(thread_id))
    assert head is not None
    return head.checkpoint["channel_values"].get("messages")


async def materialize(store: Store, **settings: Any) -> Any:
    return await run_repair(store, materialize=True, **settings)


async def test_a_delta_thread_is_written_plain_read_the_same_and_goes_on(store: Store) -> None:
    await write_turns(store, "delta", DELTA_TURNS)
    read_before = ids(await read(store, "delta"))
    assert await stored_messages(store, "delta") is None  # the plain reader's nothing

    listed = await all_checkpoints(store)
    dry = await materialize(store, dry_run=True)
    assert await all_checkpoints(store) == listed
    (found,) = dry.threads
    assert (found.thread_id, found.outcome) == ("delta", "would_repair")
    assert found.actions == {"messages": ["materialized:7 items stored as a plain value"]}

    report = await materialize(store)
    assert (report.threads_repaired, report.checkpoints_written) == (1, 1)
    plain = await stored_messages(store, "delta")
    assert type(plain) is list and ids(plain) == read_before
    assert ids(await read(store, "delta")) == read_before
    assert (await materialize(store)).checkpoints_written == 0  # already plain
    assert (await run_repair(store, dry_run=True)).threads_needing_repair == 0

    agent = delta_agent(model("Still here."), ToolBox(), store.saver)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("delta"))
    assert ids(result["messages"])[: len(read_before)] == read_before
    assert result["messages"][-1].content == "Still here."


async def test_undo_puts_the_delta_form_back(store: Store) -> None:
    await write_turns(store, "delta", DELTA_TURNS)
    read_before = ids(await read(store, "delta"))
    report = await materialize(store)
    undone = await run_undo(store, report.run_id)
    assert (undone.threads_restored, undone.threads_skipped) == (1, 0)
    stored = await stored_messages(store, "delta")
    assert isinstance(stored, _DeltaSnapshot) and ids(stored.value) == read_before
    assert ids(await read(store, "delta")) == read_before
    again = await materialize(store, dry_run=True)
    assert [t.outcome for t in again.threads] == ["would_repair"]


async def test_a_snapshot_head_is_written_plain_too(store: Store) -> None:
    """Three updates: the head stores a `_DeltaSnapshot`, which an older reader reads as
    that object instead of a list."""
    await write_turns(store, "snap", TURNS)
    snapshot = await stored_messages(store, "snap")
    assert isinstance(snapshot, _DeltaSnapshot)
    report = await materialize(store)
    assert report.threads_repaired == 1
    plain = await stored_messages(store, "snap")
    assert type(plain) is list and ids(plain) == ids(snapshot.value)


async def test_what_it_must_not_write_on_is_left_as_it_was(store: Store) -> None:
    proven = await erased_thread(store)
    await write_turns(store, "recent", [[human("r"), ai("r1", text="ok")]])
    listed = await all_checkpoints(store)

    report = await materialize(store, threads=["erased"])
    (found,) = report.threads
    assert (found.thread_id, found.outcome) == ("erased", "reported")
    assert report.findings == {"not_materialized": 1}
    recent = await materialize(store, threads=["recent"], min_idle=3600)
    assert [t.outcome for t in recent.threads] == ["recent"]
    assert await all_checkpoints(store) == listed
    assert (await run_repair(store)).threads_repaired == 1  # the erased thread: repair first
    assert (await materialize(store, threads=["erased"])).threads_repaired == 1
    assert ids(await stored_messages(store, "erased")) == proven


async def test_a_thread_without_delta_channels_is_not_touched(store: Store) -> None:
    graph = react_agent(model("Hello."), ToolBox(), store.saver)
    await store.invoke(graph, {"messages": [HumanMessage("Hi")]}, config("plain"))
    listed = await all_checkpoints(store)
    report = await materialize(store)
    assert (report.checkpoints_written, report.threads) == (0, [])
    assert await all_checkpoints(store) == listed


async def test_a_deep_agents_files_need_its_graph_and_both_channels_go_plain(
    store: Store,
) -> None:
    pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")
    from tests.support.delta_agents import deep_agent, stock_deep_agent
    from tests.support.fakes import calls

    for n in range(2):
        write = calls(("write_file", f"w{n}"), file_path=f"/f{n}.txt", content=f"file {n}")
        agent = deep_agent(model(write, "Done."), ToolBox(), store.saver)
        await store.invoke(agent, {"messages": [HumanMessage(f"Write {n}.")]}, config("deep"))
    before = (await store.get_state(agent, config("deep"))).values
    listed = await all_checkpoints(store)

    refused = await materialize(store)
    assert refused.findings == {"not_materialized": 1}
    assert await all_checkpoints(store) == listed  # half a downgrade is none

    report = await materialize(store, graph=stock_deep_agent())
    (found,) = report.threads
    assert sorted(found.actions) == ["files", "messages"]
    head = await store.get_tuple(store.saver, config("deep"))
    assert head is not None
    stored = head.checkpoint["channel_values"]
    assert type(stored["messages"]) is list and sorted(stored["files"]) == ["/f0.txt", "/f1.txt"]
    after = (await store.get_state(agent, config("deep"))).values
    assert (ids(after["messages"]), after["files"]) == (ids(before["messages"]), before["files"])
    going_on = deep_agent(model("Still here."), ToolBox(), store.saver)
    result = await store.invoke(going_on, {"messages": [HumanMessage("Hi?")]}, config("deep"))
    assert result["messages"][-1].content == "Still here."
    assert result["files"] == before["files"]
