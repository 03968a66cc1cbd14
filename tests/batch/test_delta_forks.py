"""A fork that committed another branch's messages, on every real saver: a "regenerate"
stored as LangGraph before 1.2.19 stored it (the fork unsealed) reads the answer it
replaced beside the new one, and the next snapshot commits both. `--prove-history`
finds it from the rows, the repair appends the proven value, the agent goes on, and
undo puts the read back; the wrapper asked to prove history loads it as proven. Forks
the newest LangGraph writes (a regenerate, an update on
an older checkpoint, a copy) are never flagged."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.types import Command

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.batch.test_delta_diverged import HEALTHY, _history, preview, write_turns
from tests.support.agents import ToolBox
from tests.support.batch_runs import all_checkpoints, run_repair, run_undo
from tests.support.delta_agents import deep_agent, delta_agent, delta_chat, messages_of
from tests.support.delta_damage import unseal_fork
from tests.support.fakes import model
from tests.support.histories import human
from tests.support.seeding import config
from tests.support.stores import Store

REPLIES = ["Hello.", "First answer.", "Second answer.", *["Fine."] * 8]
REGENERATED = ["Hi", "Hello.", "Again?", "Second answer."]
"""The thread after the regenerate, as the run that made it returned it."""
LATER = ["More", "And more", "Last"]
"""Turns after the fork: past the next snapshot, which commits what they read."""


def texts(messages: list[Any]) -> list[Any]:
    return [m.content for m in messages]


async def read(store: Store, thread_id: str) -> list[Any]:
    return texts(await messages_of(store, delta_chat(store.saver), config(thread_id)))


async def regenerate(store: Store, thread_id: str) -> tuple[Any, Any]:
    """Two turns, then the last answer regenerated from the checkpoint before it (a run
    from an older checkpoint); returns the agent and the checkpoint it forked from."""
    agent = delta_agent(model(*REPLIES), ToolBox(), store.saver)
    for text in ("Hi", "Again?"):
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config(thread_id))
    history = [s async for s in _history(store, agent, config(thread_id))]
    before_answer = next(s for s in history if s.next == ("agent",))
    await store.invoke(agent, None, before_answer.config)
    return agent, before_answer


async def _tuple(store: Store, thread_id: str, checkpoint_id: str) -> CheckpointTuple:
    cfg: Any = {"configurable": {**config(thread_id)["configurable"], "checkpoint_ns": ""}}
    cfg["configurable"]["checkpoint_id"] = checkpoint_id
    found = await store.get_tuple(store.saver, cfg)
    assert found is not None
    return found


async def forked_thread(store: Store, thread_id: str = "regenerated") -> list[Any]:
    """A regenerate whose fork is stored unsealed, then more turns; returns the texts
    the thread should read (the replaced answer not among them)."""
    agent, before_answer = await regenerate(store, thread_id)
    assert await read(store, thread_id) == REGENERATED
    tuples = await store.list(store.saver, config(thread_id))
    fork = next(t for t in tuples if t.metadata.get("source") == "fork")
    parent_id = before_answer.config["configurable"]["checkpoint_id"]
    await unseal_fork(store, fork, await _tuple(store, thread_id, parent_id))
    for text in LATER:
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config(thread_id))
    return [*REGENERATED, *(t for text in LATER for t in (text, "Fine."))]


async def test_a_regenerate_that_kept_the_replaced_answer_is_found_and_restored(
    store: Store,
) -> None:
    proven = await forked_thread(store)
    bricked = await read(store, "regenerated")
    assert "First answer." in bricked  # the brick: the replaced answer is read again
    assert [t for t in bricked if t != "First answer."] == proven

    listed = await all_checkpoints(store)
    dry = await run_repair(store, dry_run=True, prove_history=True)
    assert await all_checkpoints(store) == listed
    (found,) = dry.threads
    assert (found.thread_id, found.outcome) == ("regenerated", "would_repair")
    kinds = {label.split(":")[0] for label in found.actions["messages"]}
    assert kinds == {"delta_value_diverged"}
    shown = await preview(store, "regenerated")
    assert (texts(shown.before), texts(shown.after)) == (bricked, proven)

    report = await run_repair(store, prove_history=True)
    assert report.threads_repaired == 1
    assert await read(store, "regenerated") == proven
    again = await run_repair(store, prove_history=True)
    assert (again.threads_needing_repair, again.checkpoints_written) == (0, 0)

    agent = delta_agent(model("Still here."), ToolBox(), store.saver)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("regenerated"))
    assert texts(result["messages"]) == [*proven, "Hi?", "Still here."]
    assert (await run_repair(store, dry_run=True, prove_history=True)).threads == []


async def test_undo_puts_the_forked_read_back(store: Store) -> None:
    await forked_thread(store)
    bricked = await read(store, "regenerated")
    report = await run_repair(store, prove_history=True)
    undone = await run_undo(store, report.run_id)
    assert (undone.threads_restored, undone.threads_skipped) == (1, 0)
    assert await read(store, "regenerated") == bricked
    found = await run_repair(store, dry_run=True, prove_history=True)
    assert found.threads_needing_repair == 1


async def test_a_fork_not_yet_committed_is_read_as_proven_by_the_repair(store: Store) -> None:
    """Before any snapshot below the fork, the head itself reads the replaced answer."""
    agent, before_answer = await regenerate(store, "fresh")
    tuples = await store.list(store.saver, config("fresh"))
    fork = next(t for t in tuples if t.metadata.get("source") == "fork")
    parent_id = before_answer.config["configurable"]["checkpoint_id"]
    await unseal_fork(store, fork, await _tuple(store, "fresh", parent_id))
    bricked = ["Hi", "Hello.", "Again?", "First answer.", "Second answer."]
    assert await read(store, "fresh") == bricked

    report = await run_repair(store, prove_history=True)
    (found,) = report.threads
    assert found.actions["messages"][0].startswith("delta_value_diverged:")
    assert await read(store, "fresh") == REGENERATED
    await store.invoke(agent, {"messages": [HumanMessage("On?")]}, config("fresh"))
    assert await read(store, "fresh") == [*REGENERATED, "On?", "Fine."]


async def test_forks_the_newest_langgraph_writes_are_never_flagged(store: Store) -> None:
    for thread_id, turns in HEALTHY.items():
        await write_turns(store, thread_id, turns)
    agent, _ = await regenerate(store, "regenerated")
    for text in LATER:
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config("regenerated"))
    chat = delta_chat(store.saver)
    await write_turns(store, "updated")
    history = [s async for s in _history(store, chat, config("updated"))]
    await store.update_state(chat, history[2].config, {"messages": [human("edit")]}, "chat")
    await write_turns(store, "updated", [[human("after")], [human("more")]])
    await write_turns(store, "copied")
    history = [s async for s in _history(store, chat, config("copied"))]
    await store.update_state(chat, history[1].config, None, "__copy__")
    await write_turns(store, "copied", [[human("after")]])
    agent, before_answer = await regenerate(store, "edited")  # an edit, then a regenerate
    edit: Command[Any] = Command(update={"messages": [HumanMessage("Again, edited?", id="edited")]})
    await store.invoke(agent, edit, before_answer.config)
    names = [*HEALTHY, "regenerated", "updated", "copied", "edited"]
    before = {t: await read(store, t) for t in names}

    report = await run_repair(store, dry_run=True, prove_history=True)
    assert report.threads == []
    assert report.threads_scanned == len(names)
    assert (await run_repair(store, prove_history=True)).checkpoints_written == 0
    assert {t: await read(store, t) for t in names} == before


async def test_the_wrapper_proving_history_loads_the_fork_as_proven(store: Store) -> None:
    proven = await forked_thread(store)
    listed = await all_checkpoints(store)
    wrapped = PatchingCheckpointer(store.saver, prove_history=True)
    shown = await messages_of(store, delta_chat(wrapped), config("regenerated"))
    assert texts(shown) == proven
    assert await all_checkpoints(store) == listed  # nothing written on load
    agent = delta_agent(model("Still here."), ToolBox(), wrapped)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("regenerated"))
    assert texts(result["messages"]) == [*proven, "Hi?", "Still here."]
    assert await read(store, "regenerated") == [*proven, "Hi?", "Still here."]


async def test_a_deep_agents_regenerate_is_proven_as_stored_then_found_unsealed(
    store: Store,
) -> None:
    """A stock `create_deep_agent` (its `files` a delta channel too): its regenerate as
    the newest LangGraph stores it is never flagged; unsealed, it is found and repaired."""
    agent = deep_agent(model(*REPLIES), ToolBox(), store.saver)
    for text in ("Hi", "Again?"):
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config("deep"))
    history = [s async for s in _history(store, agent, config("deep"))]
    before_answer = next(s for s in history if "model" in s.next)
    await store.invoke(agent, None, before_answer.config)
    assert texts(await messages_of(store, agent, config("deep"))) == REGENERATED
    assert (await run_repair(store, dry_run=True, prove_history=True)).threads == []

    tuples = await store.list(store.saver, config("deep"))
    fork = next(t for t in tuples if t.metadata.get("source") == "fork")
    parent_id = before_answer.config["configurable"]["checkpoint_id"]
    await unseal_fork(store, fork, await _tuple(store, "deep", parent_id))
    assert "First answer." in texts(await messages_of(store, agent, config("deep")))
    report = await run_repair(store, prove_history=True)
    assert report.threads_repaired == 1
    result = await store.invoke(agent, {"messages": [HumanMessage("On?")]}, config("deep"))
    assert texts(result["messages"]) == [*REGENERATED, "On?", "Fine."]
