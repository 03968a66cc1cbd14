"""A thread too long for the model, on all six real savers: the batch job persists the
trim, undo puts the whole list back exactly, and what cannot fit is reported."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from tests.support.batch_runs import head_messages, run_repair, run_undo
from tests.support.context import POLICY, WINDOW, as_dicts, markers, overflow, reading_agent, tokens
from tests.support.fakes import window_model
from tests.support.seeding import config
from tests.support.stores import Store


async def test_the_batch_job_persists_the_trim(store: Store) -> None:
    await overflow(store, "long")
    await overflow(store, "long-too")
    report = await run_repair(store, policy=POLICY)
    assert report.threads_repaired == 2 and report.actions.get("context_trimmed") == 2
    budget = POLICY.input_budget
    assert budget is not None
    for thread_id in ("long", "long-too"):
        head = await head_messages(store, thread_id)
        assert tokens(head) <= budget and len(markers(head)) == 1
        plain = window_model(WINDOW, "Done.")
        agent = reading_agent(plain, store.saver)
        await store.invoke(agent, {"messages": [HumanMessage("Go on.")]}, config(thread_id))
        assert plain.received[-1][-1].content == "Go on."
    assert (await run_repair(store, policy=POLICY)).threads_repaired == 0


async def test_undo_restores_the_whole_original_list(store: Store) -> None:
    await overflow(store, "long")
    before = as_dicts(await head_messages(store, "long"))
    report = await run_repair(store, policy=POLICY)
    assert report.threads_repaired == 1
    assert as_dicts(await head_messages(store, "long")) != before
    undone = await run_undo(store, report.run_id)
    assert undone.threads_restored == 1
    assert as_dicts(await head_messages(store, "long")) == before


async def test_what_cannot_fit_is_reported_over_budget(store: Store) -> None:
    await overflow(store, "long")
    task = HumanMessage("Read all of it: " + "every file " * 1500)  # alone over the budget
    agent = reading_agent(window_model(WINDOW), store.saver)
    await store.update_state(agent, config("long"), {"messages": [task]}, as_node="think")
    report = await run_repair(store, policy=POLICY)
    assert report.threads_repaired == 1
    assert report.actions.get("context_trimmed") == 1 and report.actions.get("over_budget") == 1
    (thread,) = report.threads
    assert {a.split(":")[0] for a in thread.actions["messages"]} == {
        "context_trimmed",
        "over_budget",
    }
    head = await head_messages(store, "long")
    assert head[-1].content == task.content and len(head) == 2  # the marker and the task
    assert (await run_repair(store, policy=POLICY)).threads_needing_repair == 0
