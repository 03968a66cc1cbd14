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


async def test_what_cannot_fit_is_reported_over_budget_and_nothing_goes(store: Store) -> None:
    await overflow(store, "long")
    task = HumanMessage("Read all of it: " + "every file " * 1500)  # alone over the budget
    agent = reading_agent(window_model(WINDOW), store.saver)
    await store.update_state(agent, config("long"), {"messages": [task]}, as_node="think")
    stored = await head_messages(store, "long")
    before, counted = as_dicts(stored), tokens(stored)
    for _ in range(2):  # every look says so, and a second run changes nothing either
        report = await run_repair(store, policy=POLICY)
        assert report.threads_repaired == 0 and report.checkpoints_written == 0
        assert report.findings == {"over_budget": 1} and not report.actions
        (thread,) = report.threads
        assert thread.outcome == "reported" and thread.codes == ["over_budget"]
        assert thread.tokens == {"messages": {"before": counted, "after": counted}}
        assert as_dicts(await head_messages(store, "long")) == before
