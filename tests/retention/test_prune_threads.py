"""`prune_threads` on real SQLite and PostgreSQL savers, with real graphs: each thread keeps
what LangGraph loads and reads the same, the application then goes on, and undo puts
every row back as it was."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.conformance.test_utils import generate_checkpoint, generate_metadata
from langgraph.types import Command

from tests.support import asking_graphs
from tests.support.batch_runs import run_repair, run_undo
from tests.support.histories import ai, human
from tests.support.pruning import (
    PrunedStore,
    count_rows,
    plain_chat,
    prune,
    seen,
    stored_rows,
    thread,
    undo,
)


async def chain_ids(store: PrunedStore, config: Any) -> list[str]:
    """The head's checkpoint id and its ancestors', newest first, by parent pointers."""
    found = []
    tup = await store.get_tuple(store.saver, config)
    while tup is not None:
        found.append(tup.config["configurable"]["checkpoint_id"])
        parent = tup.parent_config
        tup = await store.get_tuple(store.saver, parent) if parent else None
    return found


async def chatted(store: PrunedStore, thread_id: str, turns: int) -> Any:
    graph = plain_chat(store.saver)
    for turn in range(turns):
        await store.invoke(graph, {"messages": [HumanMessage(f"turn {turn}")]}, thread(thread_id))
    return graph


async def test_a_plain_thread_keeps_exactly_its_head_and_reads_the_same(store: PrunedStore) -> None:
    graph = await chatted(store, "plain", 4)
    before = await seen(store, graph, thread("plain"))
    assert count_rows(store.reader, "plain")["checkpoints"] == 12

    report = await prune(store)

    assert count_rows(store.reader, "plain")["checkpoints"] == 1
    assert report.threads_pruned == 1 and report.deleted.rows["checkpoints"] == 11
    assert await seen(store, graph, thread("plain")) == before
    await store.invoke(graph, {"messages": [HumanMessage("again")]}, thread("plain"))
    after = (await store.get_state(graph, thread("plain"))).values["messages"]
    assert [m.content for m in after][-2:] == ["again", "reply 9"]


async def test_keep_last_keeps_the_newest_along_the_heads_chain_not_a_fork(
    store: PrunedStore,
) -> None:
    graph = await chatted(store, "forked", 3)
    history = [tup.config for tup in await store.list(store.saver, thread("forked"))]
    # A fork from an old checkpoint: its branch is newer by id than the old branch's rows.
    await store.update_state(graph, history[5], {"messages": [HumanMessage("fork")]})
    await store.invoke(graph, None, thread("forked"))
    chain = await chain_ids(store, thread("forked"))
    assert len(chain) < len(history)  # the fork's chain skips the old branch's newest rows

    await prune(store, keep_last=3)

    assert await chain_ids(store, thread("forked")) == chain[:3]
    assert count_rows(store.reader, "forked")["checkpoints"] == 3


async def test_a_thread_waiting_on_a_human_keeps_its_question_and_takes_the_answer(
    store: PrunedStore,
) -> None:
    for shape in asking_graphs.SHAPES:
        graph = asking_graphs.build(shape, store.saver)
        config = thread(f"asking-{shape}")
        await asking_graphs.answer_first(store, graph, shape, config)
        before = await seen(store, graph, config)

        await prune(store, threads=[f"asking-{shape}"])

        assert await seen(store, graph, config) == before
        done = await store.invoke(graph, Command(resume="no"), config)
        assert done["out"].endswith("'yes'+'no'"), shape


async def test_a_thread_paused_inside_a_subgraph_resumes_into_it(store: PrunedStore) -> None:
    asking_graphs.drivable(store)
    graph = asking_graphs.build("subgraph", store.saver)
    config = thread("inside")
    await store.invoke(graph, {"out": ""}, config)
    before = await seen(store, graph, config)
    namespaces = {row[1] for row in stored_rows(store.reader)["checkpoints"]}
    assert len(namespaces) == 2  # the root and the subgraph's call

    await prune(store)

    assert {row[1] for row in stored_rows(store.reader)["checkpoints"]} == namespaces
    assert await seen(store, graph, config) == before
    asked = await store.invoke(graph, Command(resume="first"), config)
    assert asking_graphs.asked(asked) == [asking_graphs.SECOND]
    done = await store.invoke(graph, Command(resume="second"), config)
    assert done["out"] == "got:'first'+'second'"


async def test_a_dry_run_changes_no_row(store: PrunedStore) -> None:
    await chatted(store, "dry", 3)
    before = stored_rows(store.reader)

    report = await prune(store, dry_run=True)

    assert stored_rows(store.reader) == before
    assert report.dry_run and report.threads_pruned == 1
    assert report.deleted.rows["checkpoints"] == 8


async def test_threads_written_within_min_idle_are_left_to_the_application(
    store: PrunedStore,
) -> None:
    await chatted(store, "live", 2)
    before = stored_rows(store.reader)

    report = await prune(store, min_idle=timedelta(minutes=10))  # the default

    assert stored_rows(store.reader) == before
    assert dict(report.skipped) == {"recent": 1} and report.threads_pruned == 0


async def test_undo_puts_every_row_back_byte_for_byte_and_the_thread_goes_on(
    store: PrunedStore,
) -> None:
    graph = await chatted(store, "undone", 3)
    await asking_graphs.answer_first(
        store, asking_graphs.build("one_task", store.saver), "one_task", thread("asking")
    )
    before = stored_rows(store.reader)
    report = await prune(store)
    assert stored_rows(store.reader) != before

    restored = await undo(store, report.run_id)

    assert restored is not None and restored.threads_restored == 2
    assert stored_rows(store.reader) == before
    assert restored.restored.rows["checkpoints"] == report.deleted.rows["checkpoints"]
    again = await undo(store, report.run_id)
    assert again is not None and again.threads_restored == 0
    await store.invoke(graph, {"messages": [HumanMessage("on")]}, thread("undone"))
    history = await store.list(store.saver, thread("undone"))
    assert len(history) == 12  # the old history is whole again, the new turn on top


async def test_a_run_without_archive_cannot_be_undone(store: PrunedStore) -> None:
    await chatted(store, "gone", 2)
    report = await prune(store, archive=False)
    assert report.threads_pruned == 1 and not report.archived

    restored = await undo(store, report.run_id)

    assert restored is not None and restored.threads_restored == 0
    assert count_rows(store.reader, "gone")["checkpoints"] == 1


async def test_a_repair_run_can_still_be_undone_after_a_prune(store: PrunedStore) -> None:
    """A repair checkpoint that is kept keeps the head it repaired, which its undo copies."""
    graph = await chatted(store, "repaired", 2)
    await store.update_state(
        graph, thread("repaired"), {"messages": [ai("a1", "c1"), human("and then?")]}
    )
    repaired = await run_repair(store, min_idle=0)
    assert repaired.checkpoints_written == 1

    await prune(store)

    assert count_rows(store.reader, "repaired")["checkpoints"] == 2  # the repair, its source
    undone = await run_undo(store, repaired.run_id)
    assert undone.threads_restored == 1
    messages = (await store.get_state(graph, thread("repaired"))).values["messages"]
    assert [m.content for m in messages][-1] == "and then?" and len(messages) == 6


async def test_checkpoints_that_name_no_blob_are_pruned_too(store: PrunedStore) -> None:
    """Rows as a bare saver client writes them: no channel versions, so no blob to free."""
    parent: Any = {"configurable": {"thread_id": "bare", "checkpoint_ns": ""}}
    for step in range(3):
        checkpoint, metadata = generate_checkpoint(), generate_metadata(step=step)
        if store.is_async:
            parent = await store.saver.aput(parent, checkpoint, metadata, {})
        else:
            parent = store.saver.put(parent, checkpoint, metadata, {})

    report = await prune(store)

    assert report.deleted.rows == {"checkpoints": 2, "writes": 0, "blobs": 0}
    assert count_rows(store.reader, "bare")["checkpoints"] == 1


async def test_delete_idle_deletes_idle_threads_but_not_one_waiting_on_a_human(
    store: PrunedStore,
) -> None:
    await chatted(store, "idle", 2)
    asking = asking_graphs.build("one_task", store.saver)
    await asking_graphs.answer_first(store, asking, "one_task", thread("waiting"))
    question = await seen(store, asking, thread("waiting"))
    before = stored_rows(store.reader)

    kept = await prune(store, delete_idle=timedelta(0))

    assert (kept.threads_pruned, kept.threads_deleted) == (2, 1)
    assert set(count_rows(store.reader, "idle").values()) == {0}
    assert count_rows(store.reader, "waiting")["checkpoints"] == 1
    assert await seen(store, asking, thread("waiting")) == question
    deleted = await prune(store, delete_idle=timedelta(0), include_waiting=True)
    assert (deleted.threads_pruned, deleted.threads_deleted) == (1, 1)
    assert set(count_rows(store.reader, "waiting").values()) == {0}
    for report in (deleted, kept):
        await undo(store, report.run_id)
    assert stored_rows(store.reader) == before
    done = await store.invoke(asking, Command(resume="no"), thread("waiting"))
    assert done["out"].endswith("'yes'+'no'")
