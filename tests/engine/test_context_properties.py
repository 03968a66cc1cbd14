"""Properties of the token budget on random histories and budgets: the output fits, or
says `over_budget` and is the repaired history untouched; every kept call is answered
right after its message; the kept messages are the repaired history's in order plus
one marker, which stands where the removed messages stood; a second pass changes
nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.context.marker import removed_by, trim_marker
from tests.support.context import markers
from tests.support.oracle import violations


def per_request(messages: Sequence[BaseMessage]) -> int:
    """A counter that does not add up per message, as a model's own may not."""
    return 7 + sum(len(str(m.content)) // 3 + 2 for m in messages)


COUNTERS = [None, per_request, len]


@st.composite
def histories(draw: Any) -> list[BaseMessage]:
    """Turns of a human message, parallel calls answered in any order, some not at all,
    an earlier marker now and then, and maybe a last turn still running."""
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(SystemMessage("system " * draw(st.integers(1, 30)), id="sys"))
    if draw(st.booleans()):
        messages.append(trim_marker(draw(st.integers(1, 99)), "old", "en"))
    for turn in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            messages.append(HumanMessage("q" * draw(st.integers(1, 400)), id=f"h{turn}"))
        ids = [f"c{turn}_{k}" for k in range(draw(st.integers(0, 3)))]
        calls: Any = [
            {"name": "t", "args": {"n": "a" * draw(st.integers(0, 90))}, "id": i} for i in ids
        ]
        messages.append(AIMessage("m" * draw(st.integers(0, 200)), id=f"a{turn}", tool_calls=calls))
        answered = draw(st.permutations(ids))[: draw(st.integers(0, len(ids)))]
        for i in answered:
            size = draw(st.sampled_from([3, 300, 3000, 30000]))
            messages.append(ToolMessage("r" * size, tool_call_id=i, name="t", id=f"r{i}"))
    return messages


def same(a: BaseMessage, b: BaseMessage) -> bool:
    """The same message, or the same result cut."""
    if a is b:
        return True
    return isinstance(a, ToolMessage) and isinstance(b, ToolMessage) and a.id == b.id


def is_subsequence(kept: list[BaseMessage], whole: list[BaseMessage]) -> bool:
    rest = iter(whole)
    return all(any(same(k, w) for w in rest) for k in kept)


@settings(max_examples=300, deadline=None)
@given(
    history=histories(),
    window=st.integers(20, 30_000),
    counter=st.sampled_from(COUNTERS),
    in_flight=st.booleans(),
)
def test_a_trim_fits_keeps_pairs_and_order_and_settles(
    history: list[BaseMessage], window: int, counter: Any, in_flight: bool
) -> None:
    policy = RepairPolicy(max_input_tokens=window, token_counter=counter)
    result = repair_messages(history, policy=policy, in_flight=in_flight)
    out = result.messages
    kinds = [a.kind for a in result.actions]
    count = counter or count_tokens_approximately
    assert policy.input_budget is not None
    repaired = repair_messages(history, in_flight=in_flight).messages
    if "over_budget" in kinds:  # nothing goes for nothing
        assert out == repaired and not {"context_trimmed", "result_truncated"} & set(kinds)
    else:
        assert count(out) <= policy.input_budget
    assert violations(out if not in_flight else _answered(out)) == []
    new_markers = [m for m in markers(out) if all(m is not h for h in history)]
    assert len(new_markers) <= 1 and len(markers(out)) <= max(1, len(markers(history)))
    assert is_subsequence([m for m in out if m not in new_markers], repaired)
    if new_markers:
        assert out.index(new_markers[0]) == _marker_place(repaired, out)
    if in_flight and isinstance(last := _last_ai(repaired), AIMessage):
        assert any(m is last for m in out)  # the turn that may still run stays
    again = repair_messages(out, policy=policy, in_flight=in_flight)
    assert again.messages is out and not again.changed
    assert repair_messages(history, policy=policy, in_flight=in_flight).messages == out


def _marker_place(repaired: list[BaseMessage], out: list[BaseMessage]) -> int:
    """Where the marker of a trim of `repaired` must stand in `out`: right after the
    task when a message that came after it is gone, else right after the system
    messages that open the history."""
    lead = 0
    while lead < len(repaired) and isinstance(repaired[lead], SystemMessage):
        lead += 1
    humans = [
        n for n, m in enumerate(repaired) if type(m) is HumanMessage and removed_by(m) is None
    ]
    task = humans[-1] if humans else None
    gone_after_task = task is not None and any(
        removed_by(m) is None and not any(same(k, m) for k in out) for m in repaired[task + 1 :]
    )
    return out.index(repaired[task]) + 1 if gone_after_task and task is not None else lead


def _last_ai(messages: list[BaseMessage]) -> BaseMessage | None:
    """The in-flight AI message: the last one when only results follow it."""
    n = len(messages) - 1
    while n >= 0 and isinstance(messages[n], ToolMessage):
        n -= 1
    return messages[n] if n >= 0 else None


def _answered(messages: list[BaseMessage]) -> list[BaseMessage]:
    """`messages` without the unanswered calls of an in-flight last turn, which the
    pairing rules leave to run: the rest must be valid."""
    last = _last_ai(messages)
    if not isinstance(last, AIMessage):
        return messages
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    kept = [c for c in last.tool_calls if c["id"] in answered]
    return [m if m is not last else last.model_copy(update={"tool_calls": kept}) for m in messages]


def test_a_marker_is_known_by_its_metadata_not_its_words() -> None:
    marker = trim_marker(12, "x", "zh")
    assert removed_by(marker) == 12
    assert removed_by(HumanMessage(str(marker.content))) is None
    assert (
        removed_by(HumanMessage("x", additional_kwargs={"langgraph_checkpoint_repair": 1})) is None
    )
