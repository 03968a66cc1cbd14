"""A delta history that went wrong and was committed, on every real saver: the thread
reads wrong (or raises), the batch job finds the seed its rows prove wrong, appends the
proven value, the graph then reads every message and goes on, and undo puts the thread
back as it read. Healthy threads (removals, an `Overwrite`, a reset, a fork, LangGraph's
own snapshots) are never flagged."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Overwrite

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch import apreview_thread, preview_thread
from tests.support.agents import ToolBox
from tests.support.batch_runs import all_checkpoints, run_repair, run_undo
from tests.support.delta_agents import delta_agent, delta_chat, messages_of
from tests.support.delta_damage import erase_history, store_flattened
from tests.support.fakes import model
from tests.support.histories import ai, human, tool
from tests.support.seeding import config
from tests.support.stores import Store

TURNS = [
    [human("a"), ai("a1", "c1"), tool("c1")],
    [ai("a2", text="done")],
    [human("b")],
    [ai("b1", text="ok")],
]
"""Four updates: past the test graphs' snapshot every three."""


async def write_turns(store: Store, thread_id: str, turns: list[Any] = TURNS) -> None:
    chat = delta_chat(store.saver)
    for update in turns:
        await store.update_state(chat, config(thread_id), {"messages": update}, "chat")


async def read(store: Store, thread_id: str) -> list[BaseMessage]:
    """The thread's messages as the plain saver hands them to the graph."""
    return await messages_of(store, delta_chat(store.saver), config(thread_id))


def ids(messages: list[BaseMessage]) -> list[str | None]:
    return [m.id for m in messages]


async def preview(store: Store, thread_id: str) -> Any:
    if store.is_async:
        return await apreview_thread(store.saver, thread_id)
    return preview_thread(store.saver, thread_id)


async def erased_thread(store: Store, thread_id: str = "erased") -> list[str | None]:
    """A thread whose update committed `messages: []`; returns the ids it should read."""
    await write_turns(store, thread_id)
    before = ids(await read(store, thread_id))
    await erase_history(store, thread_id, [human("c")])
    return [*before, "h-c"]


async def test_an_erased_history_is_found_shown_restored_and_undone(store: Store) -> None:
    proven = await erased_thread(store)
    assert await read(store, "erased") == []  # the brick: the thread forgot everything

    listed = await all_checkpoints(store)
    dry = await run_repair(store, dry_run=True)
    assert await all_checkpoints(store) == listed
    (found,) = dry.threads
    assert (found.thread_id, found.outcome) == ("erased", "would_repair")
    kinds = [label.split(":")[0] for label in found.actions["messages"]]
    assert kinds == ["delta_value_diverged"]
    shown = await preview(store, "erased")
    assert (shown.before, ids(shown.after)) == ([], proven)

    report = await run_repair(store)
    assert report.threads_repaired == 1
    assert ids(await read(store, "erased")) == proven
    again = await run_repair(store)
    assert (again.threads_needing_repair, again.threads_repaired) == (0, 0)

    agent = delta_agent(model("Still here."), ToolBox(), store.saver)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("erased"))
    assert ids(result["messages"])[: len(proven)] == proven
    assert result["messages"][-1].content == "Still here."
    assert (await run_repair(store, dry_run=True)).threads_needing_repair == 0

    undone = await run_undo(store, report.run_id)
    assert undone.threads_restored == 0  # the agent went on: its turn is kept
    assert ids(await read(store, "erased"))[: len(proven)] == proven


async def test_undo_puts_the_erased_read_back(store: Store) -> None:
    await erased_thread(store)
    report = await run_repair(store)
    undone = await run_undo(store, report.run_id)
    assert (undone.threads_restored, undone.threads_skipped) == (1, 0)
    assert await read(store, "erased") == []
    assert (await run_repair(store, dry_run=True)).threads_needing_repair == 1


async def test_a_flattened_seed_is_stored_as_a_snapshot_and_the_thread_resumes(
    store: Store,
) -> None:
    for thread_id in ("flat", "flat-tried"):
        await write_turns(store, thread_id)
        messages = await read(store, thread_id)
        await store_flattened(store, thread_id, messages)
    flattened: list[Any] = await read(store, "flat")
    assert flattened == [messages]  # the brick: one list, not messages
    agent = delta_agent(model("Back."), ToolBox(), store.saver)
    with pytest.raises(NotImplementedError, match="Message as a sequence"):
        await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("flat-tried"))

    report = await run_repair(store)
    found = {t.thread_id: t for t in report.threads}
    kinds = [label.split(":")[0] for label in found["flat"].actions["messages"]]
    assert (found["flat"].outcome, kinds) == ("repaired", ["delta_seed_flattened"])
    # The run that raised left its input pending on the head: a checkpoint on top would
    # drop it, so that thread is reported and left for its input to be answered.
    assert found["flat-tried"].outcome == "in_flight"
    assert found["flat-tried"].actions["messages"][0].startswith("delta_seed_flattened:")
    assert ids(await read(store, "flat")) == ids(messages)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("flat"))
    assert result["messages"][-1].content == "Back."
    assert ids(result["messages"])[: len(messages)] == ids(messages)
    assert (await run_repair(store)).threads_repaired == 0


HEALTHY: dict[str, list[Any]] = {
    "removed_by_id": [*TURNS, [RemoveMessage(id="a2")], [human("c")], [ai("c1", text="x")]],
    "overwritten": [*TURNS, Overwrite([human("o"), ai("o1", text="y")]), [human("p")]],
    "summarized": [
        *TURNS,
        [RemoveMessage(id=REMOVE_ALL_MESSAGES), ai("s1", text="summary"), human("d")],
        [ai("d1", text="ok")],
        [human("e")],
    ],
}


async def test_healthy_histories_are_never_flagged(store: Store) -> None:
    for thread_id, turns in HEALTHY.items():
        await write_turns(store, thread_id, turns)
    chat = delta_chat(store.saver)
    await write_turns(store, "forked")
    history = [s async for s in _history(store, chat, config("forked"))]
    older = history[2].config  # an update on a checkpoint the thread built on: a fork
    await store.update_state(chat, older, {"messages": [human("fork")]}, "chat")
    agent = delta_agent(model(*["Fine."] * 6), ToolBox(), store.saver)
    for text in ("Hi", "Again", "More"):
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config("agent"))
    before = {t: ids(await read(store, t)) for t in [*HEALTHY, "forked", "agent"]}

    report = await run_repair(store, dry_run=True)
    assert report.threads_needing_repair == 0
    assert report.threads == []
    assert (await run_repair(store)).checkpoints_written == 0
    assert {t: ids(await read(store, t)) for t in before} == before


async def _history(store: Store, graph: Any, cfg: Any) -> Any:
    if store.is_async:
        async for snapshot in graph.aget_state_history(cfg):
            yield snapshot
    else:
        for snapshot in graph.get_state_history(cfg):
            yield snapshot


async def test_the_wrapper_loads_an_erased_history_with_its_proven_value(store: Store) -> None:
    proven = await erased_thread(store)
    listed = await all_checkpoints(store)
    wrapped = PatchingCheckpointer(store.saver)
    shown = await messages_of(store, delta_chat(wrapped), config("erased"))
    assert ids(shown) == proven
    assert await all_checkpoints(store) == listed  # nothing written on load
    agent = delta_agent(model("Still here."), ToolBox(), wrapped)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("erased"))
    assert ids(result["messages"])[: len(proven)] == proven
    assert result["messages"][-1].content == "Still here."
