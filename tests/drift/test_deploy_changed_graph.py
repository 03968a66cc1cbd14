"""A deploy that renamed a node or dropped a state key, on every real saver: the brick
proven first, then found, re-targeted, resumed under the new release, and undone so
that the old release resumes as before."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import arepair_threads, aundo_run, repair_threads, undo_run
from tests.support.asking_graphs import drivable
from tests.support.release_graphs import QUESTION, RENAMES, compiled, nesting
from tests.support.stores import Store

SHAPES = ["interrupt", "pause", "sends", "extra"]
FINDING = {"interrupt": "node_missing", "pause": "node_missing", "sends": "node_missing"}
ACTION = {"interrupt": "node_renamed", "pause": "node_renamed", "sends": "node_renamed"}
DONE = {
    "interrupt": ["after yes"],
    "pause": ["planned", "acted"],
    "sends": ["fanned", "worked 1", "worked 2"],
    "extra": ["planned", "acted"],
}
"""The log of a thread resumed to its end (answered "yes" where it asks)."""


def _config() -> Any:
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}


def _resume(shape: str) -> Any:
    return Command(resume="yes") if shape == "interrupt" else None


async def _paused(store: Store, shape: str) -> Any:
    if shape == "interrupt":
        drivable(store)
    config = _config()
    await store.invoke(compiled(shape, 1, store.saver), {"topic": "x"}, config)
    return config


async def _run(store: Store, **settings: Any) -> dict[str, Any]:
    settings.setdefault("min_idle", 0)
    if store.is_async:
        report = await arepair_threads(store.saver, **settings)
    else:
        report = repair_threads(store.saver, **settings)
    return report.to_json()


async def _undo(store: Store, run_id: str) -> dict[str, Any]:
    if store.is_async:
        return (await aundo_run(store.saver, run_id)).to_json()
    return undo_run(store.saver, run_id).to_json()


@pytest.mark.parametrize("shape", SHAPES)
async def test_the_new_release_strands_a_paused_thread(store: Store, shape: str) -> None:
    """The brick: the resume returns at once and the thread never runs its work."""
    config = await _paused(store, shape)
    new = compiled(shape, 2, store.saver)
    result = await store.invoke(new, _resume(shape), config)
    assert not set(DONE[shape]) <= set(result.get("log", []))
    state = await store.get_state(new, config)
    assert not set(DONE[shape]) <= set(state.values.get("log", []))


@pytest.mark.parametrize("shape", SHAPES)
async def test_found_retargeted_resumed_and_undone(store: Store, shape: str) -> None:
    config = await _paused(store, shape)
    old, new = compiled(shape, 1, store.saver), compiled(shape, 2, store.saver)
    before = await store.get_state(old, config)
    head = await store.get_tuple(store.saver, config)

    renamed = RENAMES.get(shape, {})
    found = await _run(store, dry_run=True, graph=new, renamed_nodes=renamed)
    assert found["findings"] == {FINDING.get(shape, "channel_missing"): 1}
    assert found["threads_needing_repair"] == 1 and found["threads_repaired"] == 1
    assert found["actions"] == {ACTION.get(shape, "channel_dropped"): 1}
    assert (await store.get_tuple(store.saver, config)) == head  # the dry run wrote nothing

    run = await _run(store, graph=new, renamed_nodes=renamed)
    assert run["actions"] == {ACTION.get(shape, "channel_dropped"): 1}
    assert run["threads_repaired"] == 1
    assert not (await _run(store, dry_run=True, graph=new)).get("findings")  # idempotent

    state = await store.get_state(new, config)
    assert state.next == tuple(renamed.get(node, node) for node in before.next)
    if shape == "interrupt":
        assert [i.value for i in state.interrupts] == [QUESTION]

    undone = await _undo(store, run["run_id"])
    assert undone["threads_restored"] == 1
    restored = await store.get_state(old, config)
    assert restored.next == before.next
    assert [i.value for i in restored.interrupts] == [i.value for i in before.interrupts]
    result = await store.invoke(old, _resume(shape), config)
    assert result["log"][-len(DONE[shape]) :] == DONE[shape]


@pytest.mark.parametrize("shape", SHAPES)
async def test_the_new_release_resumes_the_retargeted_thread(store: Store, shape: str) -> None:
    config = await _paused(store, shape)
    new = compiled(shape, 2, store.saver)
    await _run(store, graph=new, renamed_nodes=RENAMES.get(shape, {}))
    result = await store.invoke(new, _resume(shape), config)
    assert result["log"][-len(DONE[shape]) :] == DONE[shape]
    assert (await store.get_state(new, config)).next == ()


async def test_an_answer_by_the_shown_interrupt_id_reaches_the_new_node(store: Store) -> None:
    config = await _paused(store, "interrupt")
    new = compiled("interrupt", 2, store.saver)
    await _run(store, graph=new, renamed_nodes={"ask": "ask2"})
    (shown,) = (await store.get_state(new, config)).interrupts
    result = await store.invoke(new, Command(resume={shown.id: "by id"}), config)
    assert result["answer"] == "by id" and result["log"] == ["after by id"]


async def test_healthy_and_finished_threads_are_not_flagged(store: Store) -> None:
    """Threads paused under the new release, and a thread the old release finished:
    nothing the new graph would skip, so nothing found and nothing written."""
    drivable(store)
    checked: list[tuple[str, list[str]]] = []
    for shape in SHAPES:
        config = _config()
        await store.invoke(compiled(shape, 2, store.saver), {"topic": "x"}, config)
        checked.append((shape, [config["configurable"]["thread_id"]]))
    finished = _config()
    old = compiled("interrupt", 1, store.saver)
    await store.invoke(old, {"topic": "x"}, finished)
    await store.invoke(old, Command(resume="yes"), finished)
    for shape in SHAPES:
        checked.append((shape, [finished["configurable"]["thread_id"]]))
    for shape, threads in checked:
        new = compiled(shape, 2)
        report = await _run(store, graph=new, renamed_nodes=RENAMES.get(shape, {}), threads=threads)
        assert report["threads_scanned"] == 1 and not report.get("findings")
        assert report["checkpoints_written"] == 0 and report["threads_needing_repair"] == 0


async def test_a_missing_node_without_a_rename_is_reported_and_left(store: Store) -> None:
    config = await _paused(store, "interrupt")
    new = compiled("interrupt", 2, store.saver)
    head = await store.get_tuple(store.saver, config)
    report = await _run(store, graph=new)
    assert report["findings"] == {"node_missing": 1} and report["checkpoints_written"] == 0
    assert await store.get_tuple(store.saver, config) == head


async def test_a_subgraph_whose_node_is_gone_is_reported_and_left(store: Store) -> None:
    """The parent renamed the node that runs a subgraph: the thread's root head and the
    subgraph's namespace are both `node_missing`; neither can be re-targeted (the
    subgraph's checkpoints are keyed by the old task), so nothing is written."""
    drivable(store)
    config = _config()
    await store.invoke(nesting("review").compile(checkpointer=store.saver), {"topic": "x"}, config)
    heads = {
        t.config["configurable"]["checkpoint_ns"] for t in await store.list(store.saver, config)
    }
    assert any(ns.startswith("review:") for ns in heads)  # the subgraph keeps its own
    new = nesting("review2").compile()
    settings: Any = {"min_idle": 0, "graph": new, "renamed_nodes": {"review": "review2"}}
    done = (
        await arepair_threads(store.saver, **settings)
        if store.is_async
        else repair_threads(store.saver, **settings)
    )
    report = done.to_json()
    assert report["findings"] == {"node_missing": 2} and report["checkpoints_written"] == 0
    (root,) = [t for t in done.threads if not t.checkpoint_ns]
    assert root.findings is not None and "not moved" in root.findings[0]["error"]
    assert "inside a subgraph of 'review'" in root.findings[0]["error"]
    found = await _run(store, dry_run=True, graph=new)
    assert found["findings"] == {"node_missing": 2}
