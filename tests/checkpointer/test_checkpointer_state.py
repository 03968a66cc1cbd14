"""Histories broken by hand load valid through the wrapper, on every real saver,
while the stored data stays exactly as it was."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_checkpoint_repair import (
    HistoryError,
    PatchingCheckpointer,
    RepairEvent,
    RepairPolicy,
)
from tests.support.agents import chat_graph, thread
from tests.support.histories import ai, human, tool
from tests.support.oracle import assert_valid, violations
from tests.support.stores import Store

BROKEN_HISTORIES: dict[str, list[BaseMessage]] = {
    "dangling": [human("a"), ai("a1", "c1"), human("b")],
    "dangling_at_the_end": [human("a"), ai("a1", "c1", "c2"), tool("c2")],
    "misplaced": [human("a"), ai("a1", "c1"), human("b"), tool("c1")],
    "orphan": [human("a"), tool("zz"), ai("a1", text="hello")],
    "duplicate": [human("a"), ai("a1", "c1"), tool("c1"), tool("c1", id="r-dup")],
    "two_ai_in_a_row": [human("a"), ai("a1", "c1"), ai("a2", "c2"), tool("c2"), tool("c1")],
    "reused_ids": [human("a"), ai("a1", "call_0"), human("b"), ai("a2", "call_0"), tool("call_0")],
}


def dump(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [m.model_dump() for m in messages]


async def store_history(store: Store, history: list[BaseMessage]) -> Any:
    config = thread()
    await store.update_state(chat_graph(store.saver), config, {"messages": history}, "chat")
    return config


@pytest.mark.parametrize("name", BROKEN_HISTORIES)
async def test_broken_history_loads_valid_identically_and_storage_is_untouched(
    store: Store, name: str
) -> None:
    config = await store_history(store, BROKEN_HISTORIES[name])
    before = await store.get_tuple(store.saver, config)
    assert before is not None
    stored = before.checkpoint["channel_values"]["messages"]
    assert violations(stored)

    wrapper = PatchingCheckpointer(store.saver)
    first = await store.get_tuple(wrapper, config)
    second = await store.get_tuple(wrapper, config)
    state = await store.get_state(chat_graph(wrapper), config)
    assert first is not None and second is not None
    repaired = first.checkpoint["channel_values"]["messages"]
    assert_valid(repaired)
    assert dump(second.checkpoint["channel_values"]["messages"]) == dump(repaired)
    assert dump(state.values["messages"]) == dump(repaired)

    after = await store.get_tuple(store.saver, config)
    assert after is not None
    assert dump(after.checkpoint["channel_values"]["messages"]) == dump(stored)
    assert after.checkpoint["id"] == before.checkpoint["id"]


async def test_next_run_stores_the_repaired_history(store: Store) -> None:
    config = await store_history(store, BROKEN_HISTORIES["misplaced"])
    await store.invoke(chat_graph(PatchingCheckpointer(store.saver)), {"messages": []}, config)
    raw = await store.get_tuple(store.saver, config)
    assert raw is not None
    assert_valid(raw.checkpoint["channel_values"]["messages"])


async def test_list_shows_the_repaired_view(store: Store) -> None:
    config = await store_history(store, BROKEN_HISTORIES["dangling"])
    graph = chat_graph(store.saver)
    await store.update_state(graph, config, {"messages": [HumanMessage("more")]}, "chat")
    raw = await store.list(store.saver, config)
    wrapped = await store.list(PatchingCheckpointer(store.saver), config)
    assert [t.checkpoint["id"] for t in wrapped] == [t.checkpoint["id"] for t in raw]
    with_messages = [t for t in wrapped if t.checkpoint["channel_values"].get("messages")]
    assert len(with_messages) == 2
    for tup in with_messages:
        assert_valid(tup.checkpoint["channel_values"]["messages"])


async def put_raw(store: Store, config: Any, values: dict[str, Any]) -> Any:
    """Store a checkpoint with the saver's own put, as a graph would."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    versions = {name: store.saver.get_next_version(None, None) for name in values}
    checkpoint["channel_versions"] = versions
    config["configurable"].setdefault("checkpoint_ns", "")
    if store.is_async:
        return await store.saver.aput(config, checkpoint, {"source": "update"}, versions)
    return store.saver.put(config, checkpoint, {"source": "update"}, versions)


async def test_every_namespace_is_repaired(store: Store) -> None:
    events: list[RepairEvent] = []
    config = thread()
    config["configurable"]["checkpoint_ns"] = "researcher:7f1c"
    saved = await put_raw(store, config, {"messages": BROKEN_HISTORIES["dangling"]})
    wrapper = PatchingCheckpointer(store.saver, on_repair=events.append)
    tup = await store.get_tuple(wrapper, saved)
    assert tup is not None
    assert_valid(tup.checkpoint["channel_values"]["messages"])
    assert [(e.checkpoint_ns, e.checkpoint_id) for e in events] == [
        ("researcher:7f1c", saved["configurable"]["checkpoint_id"])
    ]


async def test_named_channels_limit_what_is_repaired(store: Store) -> None:
    config = thread()
    broken = BROKEN_HISTORIES["dangling"]
    saved = await put_raw(store, config, {"messages": broken, "scratch": broken})
    wrapper = PatchingCheckpointer(store.saver, channels=["scratch"])
    tup = await store.get_tuple(wrapper, saved)
    assert tup is not None
    values = tup.checkpoint["channel_values"]
    assert violations(values["messages"])
    assert_valid(values["scratch"])


async def test_on_repair_and_logging_report_each_repair(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[RepairEvent] = []
    config = await store_history(store, BROKEN_HISTORIES["dangling"])
    wrapper = PatchingCheckpointer(store.saver, on_repair=events.append)
    with caplog.at_level(logging.INFO, logger="langgraph_checkpoint_repair"):
        first = await store.get_tuple(wrapper, config)
        await store.get_tuple(wrapper, config)
    assert first is not None
    assert len(events) == 2
    event = events[0]
    assert event.thread_id == config["configurable"]["thread_id"]
    assert event.checkpoint_ns == ""
    assert event.checkpoint_id == first.config["configurable"]["checkpoint_id"]
    assert [a.kind for a in event.actions["messages"]] == ["placeholder"]
    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1
    assert event.checkpoint_id is not None
    assert event.checkpoint_id in infos[0].getMessage()


ODD_VALUES: dict[str, Any] = {
    "half_deserialized": [HumanMessage("a"), {"type": "tool", "content": "x"}],
    "not_messages": [{"role": "user"}, 3],
}


@pytest.mark.parametrize("name", ODD_VALUES)
async def test_odd_data_is_returned_as_stored_and_logged_once(
    store: Store, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = thread()
    saved = await put_raw(store, config, {"messages": ODD_VALUES[name]})
    wrapper = PatchingCheckpointer(store.saver, channels=["messages"])
    with caplog.at_level(logging.ERROR, logger="langgraph_checkpoint_repair"):
        first = await store.get_tuple(wrapper, saved)
        second = await store.get_tuple(wrapper, saved)
    raw = await store.get_tuple(store.saver, saved)
    assert first is not None and second is not None and raw is not None
    assert first.checkpoint["channel_values"] == raw.checkpoint["channel_values"]
    assert second.checkpoint["channel_values"] == raw.checkpoint["channel_values"]
    failures = [r for r in caplog.records if "could not repair" in r.getMessage()]
    assert len(failures) == 1


async def test_message_with_missing_fields_still_loads(store: Store) -> None:
    odd = AIMessage.model_construct(
        content="", tool_calls=[{"id": "c1"}], invalid_tool_calls=None, id="odd"
    )
    config = thread()
    saved = await put_raw(store, config, {"messages": [HumanMessage("a"), odd]})
    tup = await store.get_tuple(PatchingCheckpointer(store.saver), saved)
    assert tup is not None
    assert [m.type for m in tup.checkpoint["channel_values"]["messages"]] == ["human", "ai", "tool"]


async def test_strict_policy_raises_on_load(store: Store) -> None:
    config = await store_history(store, BROKEN_HISTORIES["dangling"])
    wrapper = PatchingCheckpointer(store.saver, policy=RepairPolicy(strict=True))
    with pytest.raises(HistoryError) as caught:
        await store.get_tuple(wrapper, config)
    assert [a.kind for a in caught.value.actions] == ["placeholder"]


async def test_get_returns_the_repaired_checkpoint(store: Store) -> None:
    config = await store_history(store, BROKEN_HISTORIES["dangling"])
    wrapper = PatchingCheckpointer(store.saver)
    checkpoint = await wrapper.aget(config) if store.is_async else wrapper.get(config)
    assert checkpoint is not None
    assert_valid(checkpoint["channel_values"]["messages"])
