"""The engine gives exactly what the engine before its speed work gave.

`tests.support.previous_engine` keeps that engine. On generated histories, the messy
ones of the reference tests and long ones shaped like a real store (turns of
one to three calls, results in any order, some missing), both must return
equal messages and actions, the same `changed` flag, the very list when
nothing changes, the very message objects wherever they keep one, and raise
the same error.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.load import dumpd
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_checkpoint_repair import PendingCall, RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine import MARKER_KEY, PROVIDERS
from tests.support.generated import damage, messy_history, named_text, policies
from tests.support.previous_engine import previous_repair

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class StoredTool(ToolMessage):
    """A ToolMessage subclass, as some apps store: the engine learns its kind once."""


def outcome(repair: Any, history: list[BaseMessage], policy: RepairPolicy, in_flight: bool) -> Any:
    """What a repair returns, with the identity of the list and of each message,
    or the error it raises."""
    try:
        result = repair(history, policy=policy, in_flight=in_flight)
    except Exception as error:  # the error is part of the outcome
        return type(error), str(error), getattr(error, "actions", None)
    originals = {id(m) for m in history}
    kept = [id(m) in originals for m in result.messages]
    return result.messages, result.actions, result.changed, result.messages is history, kept


@st.composite
def store_history(draw: st.DrawFn) -> list[BaseMessage]:
    """Turns as a store holds them: a question, an AI message with one to three
    calls, their results in any order with some missing, an answer; now and
    then a system message, a stored subclass, a reused id, a damaged spot."""
    history: list[BaseMessage] = []
    reuse = draw(st.booleans())
    for turn in range(draw(st.integers(1, 12))):
        history.append(HumanMessage(f"q{turn}", id=f"h{turn}"))
        if draw(st.integers(0, 9)) == 0:
            history.append(SystemMessage(f"note {turn}"))
        count = draw(st.integers(1, 3))
        ids = [f"call_{k}" if reuse else f"call_{turn}_{k}" for k in range(count)]
        calls: list[Any] = [{"name": f"t{k}", "args": {}, "id": i} for k, i in enumerate(ids)]
        chunk = draw(st.integers(0, 9)) == 0
        ai_class = AIMessageChunk if chunk else AIMessage
        history.append(
            ai_class(content="", id=draw(st.sampled_from([f"a{turn}", None])), tool_calls=calls)
        )
        answered = draw(st.lists(st.sampled_from(ids), unique=True, max_size=count))
        for call_id in draw(st.permutations(answered)):
            result_class = StoredTool if draw(st.integers(0, 9)) == 0 else ToolMessage
            history.append(
                result_class(content=f"r {call_id}", tool_call_id=call_id, id=f"t{turn}{call_id}")
            )
        if draw(st.booleans()):
            history.append(AIMessage(f"answer {turn}", id=f"b{turn}"))
    for step in range(draw(st.integers(0, 2))):
        damage(draw, history, step)
    return history


def fails_on_second_call(call: PendingCall) -> str:
    """A placeholder callable that raises for one call: the error reaches the caller."""
    if call.id.endswith("_1"):
        raise RuntimeError(f"no text for {call.id}")
    return named_text(call)


store_policies = st.builds(
    RepairPolicy,
    dangling=st.sampled_from(["placeholder", "drop_call"]),
    placeholder=st.sampled_from(
        [None, "{name} ({id}): {reason}", "{name} / {id}", named_text, fails_on_second_call]
    ),
    language=st.sampled_from(["en", "zh"]),
    strict=st.booleans(),
    provider=st.sampled_from([None, *PROVIDERS]),
)


@SETTINGS
@given(messy_history(), policies, st.booleans())
def test_messy_histories_come_out_as_before(
    history: list[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> None:
    expected = outcome(previous_repair, history, policy, in_flight)
    assert outcome(repair_messages, history, policy, in_flight) == expected


@SETTINGS
@given(store_history(), store_policies, st.booleans())
def test_store_histories_come_out_as_before(
    history: list[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> None:
    expected = outcome(previous_repair, history, policy, in_flight)
    assert outcome(repair_messages, history, policy, in_flight) == expected


@SETTINGS
@given(messy_history(), st.sampled_from(PROVIDERS), st.booleans())
def test_provider_hygiene_comes_out_as_before(
    history: list[BaseMessage], provider: Any, in_flight: bool
) -> None:
    policy = RepairPolicy(provider=provider)
    expected = outcome(previous_repair, history, policy, in_flight)
    assert outcome(repair_messages, history, policy, in_flight) == expected


@pytest.mark.parametrize(
    "policy",
    [RepairPolicy(), RepairPolicy(language="zh"), RepairPolicy(placeholder="{reason}: {id}")],
)
def test_synthetic_results_are_the_validated_tool_messages(policy: RepairPolicy) -> None:
    """Made without validation, a synthetic result is what validation makes: equal,
    the same fields set, the same dumps and repr, and its own mutable parts."""
    calls: list[Any] = [{"name": "search", "args": {}, "id": i} for i in ("c1", "c2")]
    history: list[BaseMessage] = [
        HumanMessage("q"),
        AIMessage("", id="a1", tool_calls=calls[:1]),
        AIMessage("", id="a2", tool_calls=calls),
        HumanMessage("again"),
    ]
    made = [m for m in repair_messages(history, policy=policy).messages if m.type == "tool"]
    before = [m for m in previous_repair(history, policy=policy).messages if m.type == "tool"]
    assert len(made) == 3
    for new, old in zip(made, before, strict=True):
        validated = ToolMessage(
            content=old.content,
            tool_call_id=old.tool_call_id,  # type: ignore[attr-defined]
            name=old.name,
            status="error",
            id=old.id,
            response_metadata=old.response_metadata,
        )
        assert new == validated == old
        assert new.model_fields_set == validated.model_fields_set
        assert new.model_dump() == validated.model_dump()
        assert new.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
        assert dumpd(new) == dumpd(validated)
        assert repr(new) == repr(validated)
    first, second = made[0], made[1]
    for part in ("additional_kwargs", "response_metadata"):
        assert getattr(first, part) is not getattr(second, part)
    assert first.model_fields_set is not second.model_fields_set
    assert first.response_metadata[MARKER_KEY] is not second.response_metadata[MARKER_KEY]
