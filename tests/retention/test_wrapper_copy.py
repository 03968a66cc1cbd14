"""The wrapper's thread copy over every saver the package writes rows of, sync and async
(`copy_thread` where the saver talks sync, `acopy_thread` where it talks async): a
delta thread and a plain one copied inside the store read the same, and go their own
way; the source is unchanged; a copy onto a thread that has checkpoints is refused
and writes nothing."""

from __future__ import annotations

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langchain_core.messages import HumanMessage

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.stores.copying import ThreadExists
from tests.support.delta_agents import delta_chat
from tests.support.pruning import PrunedStore, count_rows, seen, stored_rows, thread


async def copy(store: PrunedStore, wrapper: PatchingCheckpointer, source: str, target: str) -> None:
    if store.is_async:
        await wrapper.acopy_thread(source, target)
    else:
        wrapper.copy_thread(source, target)


async def test_a_delta_thread_copied_reads_the_same_and_goes_its_own_way(
    store: PrunedStore,
) -> None:
    graph = delta_chat(store.saver)
    for turn in range(4):  # tagged as the Agent Server tags a thread's checkpoints
        config = {**thread("source"), "metadata": {"graph_id": "agent"}}
        await store.invoke(graph, {"messages": [HumanMessage(f"turn {turn}")]}, config)
    named_thread(store, "source")
    before = await seen(store, graph, thread("source"))
    wrapper = PatchingCheckpointer(store.saver)

    await copy(store, wrapper, "source", "copy")

    assert count_rows(store.reader, "copy") == count_rows(store.reader, "source")
    assert await seen(store, graph, thread("copy")) == before
    tagged = [t.metadata for t in store.reader.list(thread("copy"))]
    assert all(m["graph_id"] == "agent" for m in tagged)
    assert [m.get("thread_id") for m in tagged].count("copy") == 1  # the one that named it
    on_copy = delta_chat(wrapper)
    await store.invoke(on_copy, {"messages": [HumanMessage("only the copy")]}, thread("copy"))
    assert len((await store.get_state(graph, thread("copy"))).values["messages"]) == 10
    assert await seen(store, graph, thread("source")) == before
    rows = stored_rows(store.reader)
    with pytest.raises(ThreadExists, match="already has checkpoints"):
        await copy(store, wrapper, "source", "copy")
    assert stored_rows(store.reader) == rows


def named_thread(store: PrunedStore, thread_id: str) -> None:
    """The thread's head given a `thread_id` in its metadata, as some servers write one
    (LangGraph leaves it out): the copy's must name the copy."""
    head = store.reader.get_tuple(thread(thread_id))
    assert head is not None
    metadata = {**head.metadata, "thread_id": thread_id}
    versions = head.checkpoint["channel_versions"]
    assert head.parent_config is not None  # put takes the parent: the same row is rewritten
    store.reader.put(head.parent_config, head.checkpoint, metadata, versions)
