"""A delta message channel is rebuilt exactly as LangGraph's own channel replays it.

`rebuild_messages` takes a shortcut when the writes only append new messages
(`appended_messages`); otherwise LangGraph's `DeltaChannel` replays them
through the batch reducer. The replay is kept here as the reference: on drawn
seeds and writes (ids reused, missing or new, removals, the remove-all
sentinel, chunks, overwrites) both give equal lists of the very same message
objects, and the shortcut is seen to be taken where it applies.
"""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Overwrite

from langgraph_checkpoint_repair.delta import appended_messages, messages_reducer, rebuild_messages

SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
IDS = [f"m{n}" for n in range(8)]


def replayed(history: dict[str, Any]) -> Any:
    """The reference: LangGraph's channel, seeded and replayed as it does on a load."""
    channel: Any = DeltaChannel(messages_reducer).from_checkpoint(history.get("seed", []))
    channel.replay_writes(history["writes"])
    return channel.value


@st.composite
def message(draw: st.DrawFn, fresh: list[int]) -> BaseMessage:
    """A message with an id drawn from a small pool, a new one, or none."""
    fresh[0] += 1
    message_id = draw(st.sampled_from([*IDS, f"new{fresh[0]}", None]))
    kind = draw(st.sampled_from(["human", "ai", "tool", "chunk", "remove", "remove_all"]))
    if kind == "remove":
        return RemoveMessage(id=draw(st.sampled_from(IDS)))
    if kind == "remove_all":
        return RemoveMessage(id=REMOVE_ALL_MESSAGES)
    if kind == "tool":
        return ToolMessage("r", tool_call_id="c", id=message_id)
    if kind == "chunk":
        return AIMessageChunk(content="part", id=message_id)
    made: type[BaseMessage] = AIMessage if kind == "ai" else HumanMessage
    return made(f"{kind} {message_id}", id=message_id)


@st.composite
def delta_history(draw: st.DrawFn) -> Any:
    """A seed (plain or snapshotted) of messages with distinct ids, and writes after it."""
    fresh = [0]
    seed_ids = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=6))
    seed: Any = [HumanMessage(f"seed {i}", id=i) for i in seed_ids]
    if draw(st.booleans()):
        seed = _DeltaSnapshot(seed)
    writes: list[Any] = []
    for step in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 15)) == 0:
            value: Any = Overwrite([HumanMessage("over", id="over")])
        else:
            value = draw(st.lists(message(fresh), max_size=4))
        writes.append((f"task{step}", "messages", value))
    return {"seed": seed, "writes": writes}


def same_messages(got: Any, expected: Any) -> bool:
    return got == expected and [id(m) for m in got] == [id(m) for m in expected]


@SETTINGS
@given(delta_history())
def test_a_rebuild_is_the_channels_own_replay(history: Any) -> None:
    assert same_messages(rebuild_messages(history), replayed(history))


@SETTINGS
@given(delta_history())
def test_the_shortcut_gives_the_replay_wherever_it_answers(history: dict[str, Any]) -> None:
    seed = history["seed"]
    state = seed.value if isinstance(seed, _DeltaSnapshot) else seed
    values = [value for _, _, value in history["writes"]]
    if not all(type(value) is list for value in values):
        return  # an overwrite: only the channel replays it
    appended = appended_messages(state, values)
    if appended is not None:
        assert same_messages(appended, replayed(history))


def test_new_messages_only_take_the_shortcut() -> None:
    state: list[BaseMessage] = [HumanMessage("q", id="h1"), AIMessage("a", id="a1")]
    writes: list[Any] = [[HumanMessage("q2", id="h2")], [AIMessage("a2", id="a2")]]
    history: dict[str, Any] = {"seed": state, "writes": [("t", "messages", w) for w in writes]}
    appended = appended_messages(state, writes)
    assert appended is not None and same_messages(appended, replayed(history))
    assert appended is not state


@pytest.mark.parametrize(
    "write",
    [
        [HumanMessage("again", id="h1")],  # an id the state holds: replaced in place
        [HumanMessage("x", id="n"), HumanMessage("y", id="n")],  # an id written twice
        [HumanMessage("no id")],  # no id: LangGraph's reducer decides
        [RemoveMessage(id="h1")],
        [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("fresh", id="f")],
    ],
)
def test_anything_but_new_messages_goes_to_the_replay(write: list[BaseMessage]) -> None:
    state: list[BaseMessage] = [HumanMessage("q", id="h1"), AIMessage("a", id="a1")]
    history: Any = {"seed": state, "writes": [("t", "messages", write)]}
    assert appended_messages(state, [write]) is None
    assert same_messages(rebuild_messages(history), replayed(history))
