"""Property tests: generated broken histories always come out provider-valid."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_checkpoint_repair import repair_messages
from tests.support.generated import damage
from tests.support.histories import ai, human, tool
from tests.support.oracle import needs_anthropic_invalid_calls, violations

CALL_IDS = ["call_0", "call_1", "call_2", "x"]


@st.composite
def healthy_history(draw: st.DrawFn) -> list[BaseMessage]:
    """Turns of human, AI with parallel (possibly invalid) calls, and their shuffled results.

    Call ids are drawn from a tiny pool, so ids are reused across turns.
    """
    history: list[BaseMessage] = []
    for turn in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            history.append(human(f"q{turn}", id=f"h{turn}"))
        call_ids = draw(st.lists(st.sampled_from(CALL_IDS), max_size=3, unique=True))
        invalid = tuple(c for c in call_ids if draw(st.integers(0, 4)) == 0)
        valid = tuple(c for c in call_ids if c not in invalid)
        history.append(ai(f"a{turn}", *valid, invalid=invalid))
        results = [tool(c, id=f"r{turn}-{c}") for c in call_ids]
        history.extend(draw(st.permutations(results)))
    return history


@st.composite
def broken_history(draw: st.DrawFn) -> list[BaseMessage]:
    """A healthy history damaged by dropped, moved, duplicated and orphan results."""
    history = draw(healthy_history())
    for step in range(draw(st.integers(0, 6))):
        damage(draw, history, step, operations=("drop", "move", "duplicate", "orphan"))
    return history


def conversation(messages: list[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if not isinstance(m, ToolMessage)]


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@needs_anthropic_invalid_calls
@SETTINGS
@given(broken_history())
def test_repaired_history_passes_both_providers(history: list[BaseMessage]) -> None:
    result = repair_messages(history)
    assert violations(result.messages) == []


@SETTINGS
@given(broken_history())
def test_repair_is_idempotent(history: list[BaseMessage]) -> None:
    once = repair_messages(history)
    twice = repair_messages(once.messages)
    assert twice.changed is False
    assert twice.messages is once.messages


@SETTINGS
@given(broken_history())
def test_human_and_ai_messages_keep_their_order(history: list[BaseMessage]) -> None:
    repaired = repair_messages(history).messages
    assert [id(m) for m in conversation(repaired)] == [id(m) for m in conversation(history)]


@SETTINGS
@given(broken_history())
def test_a_history_that_passes_is_returned_unchanged(history: list[BaseMessage]) -> None:
    if violations(history):
        return
    result = repair_messages(history)
    assert result.changed is False
    assert result.messages is history


@needs_anthropic_invalid_calls
@SETTINGS
@given(healthy_history())
def test_healthy_histories_are_never_touched(history: list[BaseMessage]) -> None:
    assert violations(history) == []
    assert repair_messages(history).messages is history


@needs_anthropic_invalid_calls
@SETTINGS
@given(broken_history())
def test_in_flight_leaves_only_the_trailing_calls_unanswered(history: list[BaseMessage]) -> None:
    flagged = repair_messages(history, in_flight=True)
    assert repair_messages(flagged.messages, in_flight=True).changed is False
    finished = repair_messages(flagged.messages)
    last_ai = max(n for n, m in enumerate(flagged.messages) if isinstance(m, AIMessage))
    assert {a.kind for a in finished.actions} <= {"placeholder"}
    assert {a.index for a in finished.actions} <= {last_ai}
    assert violations(finished.messages) == []
