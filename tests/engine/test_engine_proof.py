"""`proves_paired` never proves a history the full engine would change.

The proof is the engine's shortcut for a valid history in the usual shape. Its
one promise: when it says True, the engine from before the shortcut (kept in
`tests.support.previous_engine`) finds nothing to do, whatever the policy. Histories
are drawn close to valid (results in call order) and then bent the ways that
matter to the proof: results reordered or missing, an id empty or used twice,
an orphan, an invalid call, an open last block, an unusual class.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.proof import proves_paired
from tests.support.generated import policies
from tests.support.previous_engine import previous_repair

SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BENDS = ("reorder", "drop", "empty_id", "reused_id", "orphan", "invalid", "open", "odd_class")


@st.composite
def valid_history(draw: st.DrawFn) -> list[BaseMessage]:
    """Turns of a question, an AI message with zero to three calls answered in call
    order, now and then an answer or a system message."""
    history: list[BaseMessage] = []
    for turn in range(draw(st.integers(0, 8))):
        history.append(HumanMessage(f"q{turn}", id=f"h{turn}"))
        if draw(st.integers(0, 5)) == 0:
            history.append(SystemMessage(f"note {turn}"))
        ids = [f"call_{turn}_{k}" for k in range(draw(st.integers(0, 3)))]
        calls: list[Any] = [{"name": f"t{k}", "args": {"k": k}, "id": i} for k, i in enumerate(ids)]
        history.append(AIMessage("", id=f"a{turn}", tool_calls=calls))
        history.extend(ToolMessage(f"r {i}", tool_call_id=i, id=f"t{i}") for i in ids)
        if draw(st.booleans()):
            history.append(AIMessage(f"answer {turn}", id=f"b{turn}"))
    return history


def bend(draw: st.DrawFn, history: list[BaseMessage], how: str) -> None:
    """One change to `history`, in place, of the kind the proof must notice."""
    results = [n for n, m in enumerate(history) if type(m) is ToolMessage]
    callers = [n for n, m in enumerate(history) if type(m) is AIMessage and m.tool_calls]
    if how == "orphan":
        history.insert(draw(st.integers(0, len(history))), ToolMessage("?", tool_call_id="ghost"))
    elif how == "open":  # a last block with its first result only
        calls: Any = [{"name": "t", "args": {}, "id": i} for i in ("o1", "o2")]
        history.append(AIMessage("", id="open", tool_calls=calls))
        history.append(ToolMessage("first", tool_call_id="o1"))
    elif how == "odd_class":
        call: Any = {"name": "t", "args": {}, "id": "in_a_chunk"}
        chunk = AIMessageChunk(content="", tool_calls=[call])
        odd = draw(st.sampled_from([ChatMessage(content="c", role="user"), chunk]))
        history.insert(draw(st.integers(0, len(history))), odd)
    elif how in ("reorder", "drop") and results:
        n = draw(st.sampled_from(results))
        moved = history.pop(n)
        if how == "reorder":
            history.insert(draw(st.integers(0, len(history))), moved)
    elif callers:
        n = draw(st.sampled_from(callers))
        message: Any = history[n]
        calls = [dict(call) for call in message.tool_calls]
        if how == "empty_id":  # the id emptied, in the call and in its result
            first = history[n + 1] if n + 1 < len(history) else None
            if isinstance(first, ToolMessage) and first.tool_call_id == calls[0]["id"]:
                history[n + 1] = first.model_copy(update={"tool_call_id": ""})
            calls[0]["id"] = ""
        elif how == "reused_id":  # the id given twice, and answered twice
            calls.append(dict(calls[0]))
            answer = ToolMessage("again", tool_call_id=calls[0]["id"])
            history.insert(n + len(message.tool_calls) + 1, answer)
        update: dict[str, Any] = {"tool_calls": calls}
        if how == "invalid":
            update["invalid_tool_calls"] = [
                {"name": "t", "args": "{", "id": "bad", "error": None, "type": "invalid_tool_call"}
            ]
        history[n] = message.model_copy(update=update)


@st.composite
def bent_history(draw: st.DrawFn) -> list[BaseMessage]:
    history = draw(valid_history())
    for how in draw(st.lists(st.sampled_from(BENDS), max_size=2)):
        bend(draw, history, how)
    return history


@SETTINGS
@given(bent_history(), policies, st.booleans())
def test_a_proven_history_is_one_the_previous_engine_leaves_alone(
    history: list[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> None:
    if not proves_paired(history, in_flight):
        return  # not proven: the full walk decides, and the equality tests cover it
    result = previous_repair(history, policy=policy, in_flight=in_flight)
    assert result.messages is history
    assert result.actions == ()
    assert not result.changed


@SETTINGS
@given(valid_history(), policies, st.booleans())
def test_every_valid_history_in_call_order_is_proven(
    history: list[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> None:
    assert proves_paired(history)
    result = repair_messages(history, policy=policy, in_flight=in_flight)
    assert result.messages is history and not result.changed and result.actions == ()


def calls_of(*ids: str) -> list[Any]:
    return [{"name": "t", "args": {}, "id": i} for i in ids]


@pytest.mark.parametrize(
    ("call_ids", "result_ids", "repaired"),
    [
        ("ab", "ba", False),  # results in another order: valid, as the walk finds
        ("aa", "aa", True),  # an id given twice and answered twice: the walk repairs it
    ],
)
def test_what_the_proof_leaves_the_walk_decides(
    call_ids: str, result_ids: str, repaired: bool
) -> None:
    history: list[BaseMessage] = [HumanMessage("q"), AIMessage("", tool_calls=calls_of(*call_ids))]
    history += [ToolMessage(i, tool_call_id=i) for i in result_ids]
    assert not proves_paired(history)
    result = repair_messages(history)
    assert result.changed is repaired
    assert (result.messages is history) is not repaired


@pytest.mark.parametrize("answered", [0, 1, 2])
def test_an_open_last_block_is_proven_only_in_flight(answered: int) -> None:
    """An interrupted thread's last block (some results in, the rest to come) is valid
    while its calls may run; once they cannot, it is the walk's to answer."""
    history: list[BaseMessage] = [HumanMessage("q"), AIMessage("", tool_calls=calls_of(*"abc"))]
    history += [ToolMessage(i, tool_call_id=i) for i in "abc"[:answered]]
    assert proves_paired(history, in_flight=True)
    assert not proves_paired(history)
    assert not repair_messages(history, in_flight=True).changed
    assert repair_messages(history).changed


def test_odd_data_is_not_proven_and_does_not_raise() -> None:
    no_id_key = AIMessage.model_construct(
        content="", tool_calls=[{"name": "t", "args": {}}], invalid_tool_calls=[]
    )
    unhashable = AIMessage.model_construct(
        content="",
        tool_calls=[{"name": "t", "args": {}, "id": ["x"]}, {"name": "t", "args": {}, "id": "y"}],
        invalid_tool_calls=[],
    )
    for odd in (no_id_key, unhashable):
        assert not proves_paired([HumanMessage("q"), odd])
