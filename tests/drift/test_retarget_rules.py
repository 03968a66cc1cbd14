"""The re-targeting's finer rules: a task that already took an answer keeps it, and a
checkpoint of the format before 4 has its pending sends in the checkpoint itself."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint
from langgraph.types import Command, Send

from langgraph_checkpoint_repair.batch import arepair_threads, aundo_run, repair_threads, undo_run
from langgraph_checkpoint_repair.drift.findings import next_work
from langgraph_checkpoint_repair.drift.retarget import retargeted_view
from tests.support.asking_graphs import drivable
from tests.support.release_graphs import asking_twice
from tests.support.stores import Store


async def test_a_second_question_moves_with_the_answer_to_the_first(store: Store) -> None:
    """The task answered its first question and waits on its second: both the answer
    and the question move, and the interrupt keeps its place in the task's answers."""
    drivable(store)
    config: Any = {"configurable": {"thread_id": "twice"}}
    old = asking_twice("ask").compile(checkpointer=store.saver)
    await store.invoke(old, {"topic": "x"}, config)
    await store.invoke(old, Command(resume="one"), config)
    assert [i.value for i in (await store.get_state(old, config)).interrupts] == ["second?"]
    settings: Any = {"min_idle": 0, "graph": asking_twice("ask2"), "renamed_nodes": {"ask": "ask2"}}
    if store.is_async:
        await arepair_threads(store.saver, **settings)
    else:
        repair_threads(store.saver, **settings)
    new = asking_twice("ask2").compile(checkpointer=store.saver)
    (shown,) = (await store.get_state(new, config)).interrupts
    assert shown.value == "second?"
    result = await store.invoke(new, Command(resume={shown.id: "two"}), config)
    assert result["answer"] == "one+two" and result["log"] == ["after one+two"]


def test_pending_sends_of_a_format_3_checkpoint_move() -> None:
    checkpoint: Any = empty_checkpoint()
    checkpoint.update(v=3, id="1f0ea180-91ba-6f40-8003-000000000001")
    checkpoint["pending_sends"] = [Send("work", {"n": 1}), Send("other", {"n": 2})]
    checkpoint["channel_versions"] = {"topic": 1}
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "x"}}
    tup = CheckpointTuple(config, checkpoint, {"step": 1, "source": "loop"}, None, [])
    assert [w.node for w in next_work(tup)] == ["work", "other"]
    moved = retargeted_view(tup, {"work": "work2"})
    assert isinstance(moved, CheckpointTuple)
    sends = moved.checkpoint["pending_sends"]  # type: ignore[typeddict-item]
    assert [(s.node, s.arg) for s in sends] == [("work2", {"n": 1}), ("other", {"n": 2})]
    assert [s.node for s in tup.checkpoint["pending_sends"]] == ["work", "other"]  # type: ignore[typeddict-item]


async def test_a_stale_answer_is_left_behind_and_undo_puts_it_back(store: Store) -> None:
    """A head holding a stale answer (the null task's, already taken) and a renamed node:
    the checkpoint moving its work leaves the answer behind, so the new graph asks the
    second question again; undo puts the answer back with the work."""
    drivable(store)
    config: Any = {"configurable": {"thread_id": "stale-twice"}}
    old = asking_twice("ask").compile(checkpointer=store.saver)
    await store.invoke(old, {"topic": "x"}, config)
    await store.invoke(old, Command(resume="one"), config)
    null_answers = _null_writes(await store.get_tuple(store.saver, config))
    assert null_answers  # LangGraph keeps the taken answer: it is stale
    settings: Any = {"min_idle": 0, "graph": asking_twice("ask2"), "renamed_nodes": {"ask": "ask2"}}
    report = (
        await arepair_threads(store.saver, **settings)
        if store.is_async
        else repair_threads(store.saver, **settings)
    )
    assert report.actions == {"node_renamed": 1, "resume_dropped": 1}
    assert _null_writes(await store.get_tuple(store.saver, config)) == []
    undone = (
        await aundo_run(store.saver, report.run_id)
        if store.is_async
        else undo_run(store.saver, report.run_id)
    )
    assert undone.threads_restored == 1
    assert _null_writes(await store.get_tuple(store.saver, config)) == null_answers
    assert [i.value for i in (await store.get_state(old, config)).interrupts] == ["second?"]


def _null_writes(tup: Any) -> list[Any]:
    return [w[1:] for w in tup.pending_writes if w[0] == "00000000-0000-0000-0000-000000000000"]
