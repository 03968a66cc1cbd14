"""`PatchingCheckpointer(saver, renamed_nodes=...)`: a rolling deploy resumes threads
paused under the old release before any batch run, and nothing is written on load."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langgraph.types import Command

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support.asking_graphs import drivable
from tests.support.release_graphs import QUESTION, RENAMES, compiled
from tests.support.stores import Store

DONE = {
    "interrupt": ["after yes"],
    "pause": ["planned", "acted"],
    "sends": ["fanned", "worked 1", "worked 2"],
}


@pytest.mark.parametrize("shape", sorted(RENAMES))
async def test_a_loaded_head_is_shown_retargeted_and_resumes(store: Store, shape: str) -> None:
    if shape == "interrupt":
        drivable(store)
    config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
    await store.invoke(compiled(shape, 1, store.saver), {"topic": "x"}, config)
    stored = await store.get_tuple(store.saver, config)
    wrapped = PatchingCheckpointer(store.saver, renamed_nodes=RENAMES[shape])
    new = compiled(shape, 2, wrapped)

    state = await store.get_state(new, config)
    assert state.next and set(state.next) == set(RENAMES[shape].values())
    if shape == "interrupt":
        assert [i.value for i in state.interrupts] == [QUESTION]
    assert await store.get_tuple(store.saver, config) == stored  # nothing written on load

    resume: Any = Command(resume="yes") if shape == "interrupt" else None
    result = await store.invoke(new, resume, config)
    assert result["log"][-len(DONE[shape]) :] == DONE[shape]
    assert (await store.get_state(new, config)).next == ()


async def test_by_id_answers_and_untouched_threads(store: Store) -> None:
    """An answer by the shown id reaches the new node; a thread of the new release
    loads through the wrapper as stored."""
    drivable(store)
    wrapped = PatchingCheckpointer(store.saver, renamed_nodes={"ask": "ask2"})
    old: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
    fresh: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
    await store.invoke(compiled("interrupt", 1, store.saver), {"topic": "x"}, old)
    new = compiled("interrupt", 2, wrapped)
    await store.invoke(new, {"topic": "y"}, fresh)
    assert await store.get_tuple(wrapped, fresh) == await store.get_tuple(store.saver, fresh)
    (shown,) = (await store.get_state(new, old)).interrupts
    result = await store.invoke(new, Command(resume={shown.id: "by id"}), old)
    assert result["log"] == ["after by id"]


def test_renamed_nodes_must_be_names() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(ValueError, match="two node names"):
        PatchingCheckpointer(InMemorySaver(), renamed_nodes={"ask": ""})
    with pytest.raises(TypeError, match="mapping of OLD to NEW"):
        PatchingCheckpointer(InMemorySaver(), renamed_nodes=["ask"])  # type: ignore[arg-type]
