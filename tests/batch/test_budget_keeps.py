"""What a budget repair keeps, on all six real savers: a pasted log larger than the
budget keeps the model's answer and stays `over_budget` on every look, through the
batch job, `show`'s preview and the wrapper on load; a long run after its task is
trimmed to fit with the marker right after the task."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch import apreview_thread, preview_thread
from langgraph_checkpoint_repair.batch.preview import ThreadPreview
from tests.support.batch_runs import all_checkpoints, head_messages, run_repair
from tests.support.context import (
    ANSWER,
    LOG,
    POLICY,
    WINDOW,
    WINDOW_200K,
    as_dicts,
    markers,
    paste_the_log,
    reading_agent,
    reading_turns,
    tokens,
)
from tests.support.fakes import window_model
from tests.support.oracle import assert_valid
from tests.support.seeding import config
from tests.support.stores import Store


async def preview(store: Store, thread_id: str) -> ThreadPreview:
    if store.is_async:
        return await apreview_thread(store.saver, thread_id, policy=WINDOW_200K)
    return preview_thread(store.saver, thread_id, policy=WINDOW_200K)


async def test_a_pasted_log_keeps_its_answer_and_is_over_budget_on_every_look(
    store: Store,
) -> None:
    await paste_the_log(store, "paste")
    stored = await head_messages(store, "paste")
    assert [m.content for m in stored] == [LOG, ANSWER] and tokens(stored) > 200_000
    rows = await all_checkpoints(store)
    for _ in range(2):  # a repair, then a second one: neither writes, both say so
        report = await run_repair(store, policy=WINDOW_200K)
        assert report.threads_repaired == 0 and report.checkpoints_written == 0
        assert report.findings == {"over_budget": 1} and not report.actions
        (thread,) = report.threads
        assert thread.outcome == "reported" and thread.codes == ["over_budget"]
        assert thread.findings is not None
        (finding,) = thread.findings
        assert finding["channel"] == "messages"
        assert f"{tokens(stored):,} tokens, over the budget of 180,000" in finding["error"]
        shown = await preview(store, "paste")
        assert shown.outcome == "reported" and shown.after == shown.before
        assert [f.code for f in shown.findings] == ["over_budget"]
        assert shown.tokens == (tokens(stored), tokens(stored))
    assert await all_checkpoints(store) == rows
    assert as_dicts(await head_messages(store, "paste")) == as_dicts(stored)

    wrapped = PatchingCheckpointer(store.saver, policy=WINDOW_200K)  # on load: the same
    loaded = await store.get_tuple(wrapped, config("paste"))
    assert loaded is not None
    assert [m.content for m in loaded.checkpoint["channel_values"]["messages"]] == [LOG, ANSWER]
    model = window_model(400_000, "Rebuilt.")
    agent = reading_agent(model, wrapped)
    await store.invoke(agent, {"messages": [HumanMessage("Try again?")]}, config("paste"))
    assert [m.content for m in model.received[-1]][:2] == [LOG, ANSWER]  # its own answer


async def test_a_long_run_after_its_task_keeps_the_task_then_the_marker(store: Store) -> None:
    """A task, twenty reads and an answer, by a model with a larger window."""
    model = window_model(100_000, *reading_turns(20), "All read.")
    task_input = {"messages": [HumanMessage("Read the whole repository.")]}
    run = {**config("long"), "recursion_limit": 100}  # older releases stop at 25 steps
    await store.invoke(reading_agent(model, store.saver), task_input, run)
    stored = await head_messages(store, "long")
    report = await run_repair(store, policy=POLICY)
    assert report.threads_repaired == 1 and report.actions == {"context_trimmed": 1}
    head = await head_messages(store, "long")
    budget = POLICY.input_budget
    assert budget is not None and tokens(head) <= budget
    task = stored[0]
    assert head[0].id == task.id and markers(head) == [head[1]]
    kept = head[2:]
    assert as_dicts(kept) == as_dicts(stored[len(stored) - len(kept) :])  # newest, in order
    assert isinstance(head[-1], type(stored[-1])) and head[-1].id == stored[-1].id
    assert_valid(head)
    assert (await run_repair(store, policy=POLICY)).threads_repaired == 0  # it fits now
    model = window_model(WINDOW, AIMessage("Done."))
    agent = reading_agent(model, store.saver)
    await store.invoke(agent, {"messages": [HumanMessage("Go on.")]}, config("long"))
    assert model.received[-1][0].id == task.id and model.received[-1][1].id == head[1].id
    assert as_dicts(await head_messages(store, "long"))[: len(head)] == as_dicts(head)
