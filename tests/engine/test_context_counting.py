"""The budget's counting against LangChain's own: `approximate_counts` equals
`count_tokens_approximately` message by message, `fits_paired` never clears a
history LangChain counts over the budget (or one `proves_paired` does not prove),
and the engine decides exactly as it does with LangChain's function as its counter."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.context.counting import COUNTS_BLOCKS, approximate_counts
from langgraph_checkpoint_repair.engine.context.lean import fits_paired
from langgraph_checkpoint_repair.engine.proof import proves_paired
from tests.engine.test_context_properties import histories

HOSTILE = ["'", '"', "\\", "\x00", "\x7f", "\x85", "\u2028", "\ud800", "\U000e0001", "é😀", "\t"]
TEXTS = st.text(st.characters(codec=None, exclude_categories=()), max_size=30) | st.sampled_from(
    HOSTILE
)
ARGUMENTS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | TEXTS
    | st.binary(max_size=8)
    | st.just(...)
    | st.just(StopIteration),
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(), max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=6)
    ),
    max_leaves=40,
)
BLOCKS = st.lists(
    TEXTS
    | st.fixed_dictionaries({"type": st.just("text"), "text": TEXTS})
    | st.fixed_dictionaries({"type": st.sampled_from(["image", "image_url"]), "url": TEXTS})
    | st.dictionaries(st.sampled_from(["type", "data", "x"]), TEXTS, max_size=3),
    max_size=4,
)


class NamedHuman(HumanMessage):
    """A subclass: counted by LangChain's function, not by exact class."""


@st.composite
def messages(draw: Any) -> BaseMessage:
    content = draw(TEXTS | BLOCKS)
    name = draw(st.none() | TEXTS)
    kind = draw(st.sampled_from(["human", "ai", "system", "tool", "chat", "subclass"]))
    if kind == "ai":
        calls = [
            {
                "name": draw(TEXTS),
                "args": draw(st.dictionaries(TEXTS, ARGUMENTS, max_size=3)),
                "id": i,
            }
            for i in draw(st.lists(TEXTS, max_size=3))
        ]
        return AIMessage(content, name=name, tool_calls=calls)
    if kind == "tool":
        return ToolMessage(content, tool_call_id=draw(TEXTS), name=name)
    if kind == "chat":
        return ChatMessage(content=content, role=draw(TEXTS), name=name)
    if kind == "system":
        roles = st.none() | TEXTS | st.just("developer") | st.integers()
        extra = {} if (role := draw(roles)) is None else {"__openai_role__": role}
        return SystemMessage(content, name=name, additional_kwargs=extra)
    if kind == "subclass":
        return NamedHuman(content=content, name=name)
    return HumanMessage(content, name=name)


@settings(max_examples=500, deadline=None)
@given(history=st.lists(messages(), max_size=6))
def test_each_count_is_langchains(history: list[BaseMessage]) -> None:
    """A system message's role of its own (`__openai_role__`) included, even one
    LangChain refuses: then both fail alike."""
    try:
        expected = [count_tokens_approximately((m,)) for m in history]
    except TypeError:
        with pytest.raises(TypeError):
            approximate_counts(history)
        assert not fits_paired(history, False, 10**9)
        return
    counts = approximate_counts(history)
    assert counts == expected
    assert sum(counts) == count_tokens_approximately(history)
    assert not fits_paired(history, False, sum(counts) - 1)


@settings(max_examples=300, deadline=None)
@given(history=histories(), budget=st.integers(0, 60_000), in_flight=st.booleans())
def test_a_history_cleared_is_proven_paired_and_fits(
    history: list[BaseMessage], budget: int, in_flight: bool
) -> None:
    if fits_paired(history, in_flight, budget):
        assert proves_paired(history, in_flight)
        assert count_tokens_approximately(history) <= budget


@settings(max_examples=200, deadline=None)
@given(history=histories(), in_flight=st.booleans())
def test_a_proven_history_with_room_is_cleared(history: list[BaseMessage], in_flight: bool) -> None:
    """The bound decides the usual case: a valid history with room to spare (here a
    budget eight times its count and 200 tokens a message) needs no count."""
    if proves_paired(history, in_flight):
        room = 8 * count_tokens_approximately(history) + 200 * len(history)
        assert fits_paired(history, in_flight, room)


def never_below_langchains(calls: Any) -> bool:
    """Whether `fits_paired` declines every budget below LangChain's count of a history
    holding `calls`, each answered: its bound is never below that count."""
    message = AIMessage("", tool_calls=calls)
    history = [message, *(ToolMessage("r", tool_call_id=c["id"]) for c in message.tool_calls)]
    return not fits_paired(history, False, count_tokens_approximately(history) - 1)


@settings(max_examples=500, deadline=None)
@given(
    arguments=st.lists(st.dictionaries(st.text(max_size=8), ARGUMENTS, max_size=4), max_size=4),
    names=st.lists(TEXTS, min_size=4, max_size=4),
)
def test_the_bound_holds_for_any_calls(arguments: list[dict[str, Any]], names: list[str]) -> None:
    """Hostile names and ids (escapes, quotes, surrogates), lists of `False` (the most
    repr for a byte of marshal), `...` and `StopIteration` (more still), nesting."""
    calls = [
        {"name": names[n], "args": a, "id": f"{names[-n]}{n}"} for n, a in enumerate(arguments)
    ]
    assert never_below_langchains(calls)


def test_the_bound_holds_for_the_densest_repr() -> None:
    for dense in ([False] * 1000, [None] * 1000, [...] * 1000, [StopIteration] * 1000):
        assert never_below_langchains([{"name": "t", "args": {"x": dense}, "id": "c"}])
    assert never_below_langchains([{"name": "\x00" * 50, "args": {}, "id": "\U000e0001" * 50}])


def test_the_bound_declines_what_it_cannot_bound() -> None:
    """A key LangChain would not have made, a string whose repr is its own, what
    marshal does not write: the long way decides."""

    class Loud(str):
        def __repr__(self) -> str:
            return "x" * 10_000

    loop: list[Any] = []
    loop.append(loop)
    odd_calls: list[Any] = [
        {"name": "t", "args": {}, "id": "c", "extra": 1},
        {"name": Loud("t"), "args": {}, "id": "c", "type": "tool_call"},
        {"name": "t", "args": {}, "id": "c", "type": Loud("tool_call")},
        {"name": "t", "args": {"x": loop}, "id": "c", "type": "tool_call"},
        {"name": "t", "args": {"x": object()}, "id": "c", "type": "tool_call"},
    ]
    for call in odd_calls:
        message = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c"}])
        message.tool_calls[0] = call
        history = [message, ToolMessage("r", tool_call_id="c")]
        assert proves_paired(history) or "extra" in call or "x" in call["args"]
        assert not fits_paired(history, False, 10**9)


def test_blocks_are_bounded_and_an_odd_block_goes_the_long_way() -> None:
    blocks: list[Any] = [{"type": "text", "text": "hi"}, {"type": "image", "url": "x" * 9000}]
    history: list[BaseMessage] = [HumanMessage(blocks)]
    count = count_tokens_approximately(history)
    assert fits_paired(history, False, 10 * count) == COUNTS_BLOCKS  # else LangChain counts
    assert not fits_paired(history, False, count - 1)
    odd: list[BaseMessage] = [HumanMessage([{"type": "text", "text": None}])]
    assert not fits_paired(odd, False, 10**6)
    policy = RepairPolicy(max_input_tokens=10**6)
    assert repair_messages(history, policy=policy).messages is history


def _langchains(messages: list[BaseMessage]) -> int:
    """LangChain's function as a counter of the policy's own: the engine then counts
    the general way, message by message and the whole."""
    return count_tokens_approximately(messages)


@settings(max_examples=300, deadline=None)
@given(
    history=histories(),
    window=st.integers(20, 60_000),
    in_flight=st.booleans(),
    strict=st.booleans(),
)
def test_every_decision_is_the_one_langchains_counter_makes(
    history: list[BaseMessage], window: int, in_flight: bool, strict: bool
) -> None:
    """The fast counts and the bound change nothing: the same list (the same objects
    where nothing changed), the same actions, the same strict failures."""

    def run(counter: Any) -> Any:
        policy = RepairPolicy(max_input_tokens=window, token_counter=counter, strict=strict)
        try:
            return repair_messages(history, policy=policy, in_flight=in_flight)
        except Exception as error:  # the failure is what is compared
            return error

    fast, reference = run(None), run(_langchains)
    if isinstance(reference, Exception):
        assert type(fast) is type(reference) and str(fast) == str(reference)
        return
    assert not isinstance(fast, Exception)
    assert fast.actions == reference.actions and fast.changed == reference.changed
    assert fast.messages == reference.messages
    assert (fast.messages is history) == (reference.messages is history)
