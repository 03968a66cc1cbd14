"""A deep agent's `files` (a delta channel that holds no messages) is read from the
store once per load through the wrapper, as without it: the history the wrapper reads
to rebuild `messages` brings `files` along, and LangGraph is handed that, not a second
read. Counted on every real saver by wrapping its own history method."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import HumanMessage

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.delta import COUNTERS_KEY
from tests.support.agents import ToolBox, thread
from tests.support.delta_agents import deep_agent
from tests.support.fakes import calls, model
from tests.support.stores import Store


def count_history_reads(store: Store, saver: Any = None) -> Counter[str]:
    """Count, per channel, the histories the saver's own walk reads: through its async
    method for an async store, its sync one otherwise (one may call the other)."""
    reads: Counter[str] = Counter()
    saver = saver or store.saver
    name = "aget_delta_channel_history" if store.is_async else "get_delta_channel_history"
    walk: Callable[..., Any] = getattr(saver, name)

    def counted(*, config: Any, channels: Sequence[str]) -> Any:
        reads.update(channels)
        return walk(config=config, channels=channels)

    setattr(saver, name, counted)  # an awaitable comes back as it is, for the async one
    return reads


async def seed_files(store: Store, config: Any) -> None:
    """A deep agent turn that writes a file: `files` and `messages` both delta channels
    with nothing stored at the head."""
    replies = model(calls(("write_file", "w1"), file_path="/notes.txt", content="hello"), "Done.")
    agent = deep_agent(replies, ToolBox(), store.saver)
    await store.invoke(agent, {"messages": [HumanMessage("Take a note.")]}, config)
    head = await store.get_tuple(store.saver, config)
    assert head is not None
    counters: Any = head.metadata.get(COUNTERS_KEY) or {}
    assert {"files", "messages"} <= set(counters)
    assert "files" not in head.checkpoint["channel_values"]


async def test_a_deep_agents_files_are_read_once_per_load(store: Store) -> None:
    config = thread()
    await seed_files(store, config)
    raw_agent = deep_agent(model(), ToolBox(), store.saver)
    expected = await store.get_state(raw_agent, config)

    reads = count_history_reads(store)
    # the wrapper loads through its own copy of the saver, counted reads included
    wrapped_agent = deep_agent(model(), ToolBox(), PatchingCheckpointer(store.saver))
    raw = await store.get_state(raw_agent, config)
    raw_reads = Counter(reads)
    reads.clear()
    wrapped = await store.get_state(wrapped_agent, config)

    assert raw.values == expected.values
    assert wrapped.values == expected.values
    assert "/notes.txt" in wrapped.values["files"]
    assert raw_reads == Counter({"files": 1, "messages": 1})
    assert reads == Counter({"files": 1, "messages": 1})


async def test_files_left_unasked_are_not_handed_to_another_checkpoint(store: Store) -> None:
    """Histories a load leaves over are for that checkpoint only: another checkpoint's
    history is read from the store."""
    config = thread()
    await seed_files(store, config)
    wrapped = PatchingCheckpointer(store.saver)
    tuples = await store.list(store.saver, config)
    head, older = tuples[0], tuples[1]
    await store.get_tuple(wrapped, head.config)
    reads = count_history_reads(store, wrapped.saver)  # the wrapper reads through its copy
    if store.is_async:
        await wrapped.aget_delta_channel_history(config=older.config, channels=["files"])
    else:
        wrapped.get_delta_channel_history(config=older.config, channels=["files"])
    assert reads == Counter({"files": 1})


async def test_a_chain_is_checked_once_for_the_loads_that_follow(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard against looping parent chains checks a checkpoint's chain at its first
    load through the wrapper; loading it again, or its child, checks nothing more."""
    from langgraph_checkpoint_repair.stores import drivers, history

    config = thread()
    await seed_files(store, config)
    checked: list[Any] = []
    for name in ("check_chain", "acheck_chain"):
        real: Callable[..., Any] = getattr(history, name)

        def counted(saver: Any, at: Any, real: Callable[..., Any] = real) -> Any:
            checked.append(at["configurable"].get("checkpoint_id"))
            return real(saver, at)

        monkeypatch.setattr(history, name, counted)
    wrapped = PatchingCheckpointer(store.saver)
    head, parent = (await store.list(store.saver, config))[:2]
    await store.get_tuple(wrapped, parent.config)
    await store.get_tuple(wrapped, parent.config)
    await store.get_tuple(wrapped, head.config)
    await store.get_tuple(wrapped, config)
    if drivers.walk_owner(store.saver, history.SYNC_WALK) == "":  # its own guarded walk
        assert checked == []
    else:
        assert checked == [parent.config["configurable"]["checkpoint_id"]]
