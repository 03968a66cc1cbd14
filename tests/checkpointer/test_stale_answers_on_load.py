"""A stale answer through `PatchingCheckpointer`: left out of the load, so LangGraph asks
again, in the three shapes, on every real saver, sync and async."""

from __future__ import annotations

import logging

import pytest
from langgraph.types import Command

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy
from langgraph_checkpoint_repair.stale_answers import is_null_answer
from tests.support.asking_graphs import (
    FIRST,
    SECOND,
    SHAPES,
    answer_first,
    asked,
    build,
    drivable,
    thread,
)
from tests.support.stores import Store


@pytest.mark.parametrize("shape", SHAPES)
async def test_the_brick_is_real_the_raw_saver_hands_the_first_answer_to_the_second_question(
    store: Store, shape: str
) -> None:
    graph = build(shape, store.saver)
    assert asked(await answer_first(store, graph, shape, thread("t"))) == [SECOND]

    result = await store.invoke(graph, None, thread("t"))

    assert result["out"].endswith("'yes'+'yes'")  # a confirmation nobody gave
    assert asked(result) == []


@pytest.mark.parametrize("shape", SHAPES)
async def test_through_the_wrapper_the_second_question_is_asked_again_and_then_answered(
    store: Store, shape: str
) -> None:
    await answer_first(store, build(shape, store.saver), shape, thread("t"))
    graph = build(shape, PatchingCheckpointer(store.saver))

    again = await store.invoke(graph, None, thread("t"))
    stored = await store.get_tuple(store.saver, thread("t"))  # a load writes nothing
    answered = await store.invoke(graph, Command(resume="no"), thread("t"))

    assert asked(again) == [SECOND]
    assert stored is not None and any(is_null_answer(w) for w in stored.pending_writes or ())
    assert answered["out"].endswith("'yes'+'no'")


async def test_the_same_answer_given_again_goes_through(store: Store) -> None:
    await answer_first(store, build("one_task", store.saver), "one_task", thread("t"))
    graph = build("one_task", PatchingCheckpointer(store.saver))

    result = await store.invoke(graph, Command(resume="yes"), thread("t"))

    assert result["out"] == "got:'yes'+'yes'"  # this time somebody gave it


@pytest.mark.parametrize("shape", SHAPES)
async def test_policy_keep_leaves_the_answer_as_langgraph_stored_it(
    store: Store, shape: str
) -> None:
    await answer_first(store, build(shape, store.saver), shape, thread("t"))
    wrapped = PatchingCheckpointer(store.saver, policy=RepairPolicy(stale_resume="keep"))

    result = await store.invoke(build(shape, wrapped), None, thread("t"))

    assert result["out"].endswith("'yes'+'yes'")


async def test_a_thread_waiting_on_its_first_question_loads_as_stored(store: Store) -> None:
    drivable(store)
    graph = build("one_task", store.saver)
    assert asked(await store.invoke(graph, {"out": ""}, thread("t"))) == [FIRST]
    wrapped = PatchingCheckpointer(store.saver)

    raw = await store.get_tuple(store.saver, thread("t"))
    loaded = await store.get_tuple(wrapped, thread("t"))

    assert raw is not None and loaded is not None
    assert loaded.pending_writes == raw.pending_writes


async def test_an_answer_given_by_interrupt_id_is_never_left_out(store: Store) -> None:
    drivable(store)
    graph = build("one_task", store.saver)
    first = (await store.invoke(graph, {"out": ""}, thread("t")))["__interrupt__"][0]
    await store.invoke(graph, Command(resume={first.id: "yes"}), thread("t"))
    wrapped = PatchingCheckpointer(store.saver)

    raw = await store.get_tuple(store.saver, thread("t"))
    loaded = await store.get_tuple(wrapped, thread("t"))
    result = await store.invoke(build("one_task", wrapped), None, thread("t"))

    assert raw is not None and loaded is not None
    assert loaded.pending_writes == raw.pending_writes
    assert asked(result) == [SECOND]


async def test_a_left_out_answer_is_logged_with_its_thread(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    await answer_first(store, build("subgraph", store.saver), "subgraph", thread("waiting-7"))
    wrapped = PatchingCheckpointer(store.saver)

    with caplog.at_level(logging.INFO, logger="langgraph_checkpoint_repair"):
        loaded = await store.get_tuple(wrapped, thread("waiting-7"))

    assert loaded is not None
    assert not any(is_null_answer(write) for write in loaded.pending_writes or ())
    lines = [r.getMessage() for r in caplog.records if "stale answer" in r.getMessage()]
    assert len(lines) == 1 and "thread='waiting-7'" in lines[0]


async def test_a_head_read_again_and_again_is_logged_once(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    """A server reads a head several times a request: one line says it, per head."""
    for name in ("waiting-8", "waiting-9"):
        await answer_first(store, build("subgraph", store.saver), "subgraph", thread(name))
    wrapped = PatchingCheckpointer(store.saver)

    with caplog.at_level(logging.INFO, logger="langgraph_checkpoint_repair"):
        for _ in range(6):
            for name in ("waiting-8", "waiting-9"):
                loaded = await store.get_tuple(wrapped, thread(name))
                assert loaded is not None
                assert not any(is_null_answer(write) for write in loaded.pending_writes or ())

    lines = [r.getMessage() for r in caplog.records if "stale answer" in r.getMessage()]
    assert len(lines) == 2
    assert "thread='waiting-8'" in lines[0] and "thread='waiting-9'" in lines[1]
