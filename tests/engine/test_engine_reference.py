"""The engine gives exactly the reference engine's output on generated histories."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage

from langgraph_checkpoint_repair import HistoryError, RepairPolicy, RepairResult, repair_messages
from tests.support.generated import messy_history, policies
from tests.support.reference_engine import reference_repair

SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(result: RepairResult, history: list[BaseMessage]) -> tuple[object, ...]:
    return (result.messages, result.actions, result.changed, result.messages is history)


@SETTINGS
@given(messy_history(), policies, st.booleans())
def test_engine_equals_the_reference(
    history: list[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> None:
    try:
        expected: object = outcome(
            reference_repair(history, policy=policy, in_flight=in_flight), history
        )
    except HistoryError as error:
        expected = error.actions
    try:
        actual: object = outcome(
            repair_messages(history, policy=policy, in_flight=in_flight), history
        )
    except HistoryError as error:
        actual = error.actions
    assert actual == expected


@SETTINGS
@given(messy_history(), st.booleans())
def test_engine_output_is_a_fixed_point(history: list[BaseMessage], in_flight: bool) -> None:
    once = repair_messages(history, in_flight=in_flight)
    twice = repair_messages(once.messages, in_flight=in_flight)
    assert twice.changed is False
    assert twice.messages is once.messages
