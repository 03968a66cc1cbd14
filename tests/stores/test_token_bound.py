"""The first look's token bound (`token_bound.history_bound`) is never below LangChain's
`count_tokens_approximately` of the messages the saver builds from the same bytes.

Histories of every message class, with hostile strings (control characters, DEL,
quotes, backslashes, characters outside the BMP, unprintable ones), names, nested
call arguments and list contents of text, image and other blocks, stored by a real
serializer; and stored fields of odd shapes written straight as msgpack. Where the
bound answers a number, the full load must build messages LangChain can count, and
count no more. Where it is a number on ordinary messages, it is close (it must clear
real heads, not only tiny ones).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import ormsgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    ToolMessageChunk,
)
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_checkpoint_repair.decoding.strict import StrictSerializer
from langgraph_checkpoint_repair.stores.first_look.plain import decode_plain
from langgraph_checkpoint_repair.stores.first_look.token_bound import (
    CALL_TYPE_CHARS,
    CHARS_PER_TOKEN,
    history_bound,
)

SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HOSTILE = "\x00\x01\x1f\x7f\x85\xa0\xad'\"\\\n\t\u200b\u2028\ufeff\U0001f600\U000e0001\U0010ffff"
texts = st.text(st.sampled_from(HOSTILE) | st.characters(exclude_categories=["Cs"]), max_size=12)
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
)


def nested(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=12,
    )


json_values = nested(json_leaves | st.binary(max_size=4))
args = st.dictionaries(texts, json_values, max_size=4)
json_args = st.dictionaries(texts, nested(json_leaves), max_size=4)
"""A chunk's calls are kept as JSON too: no bytes in them."""
names = st.none() | texts


@st.composite
def tool_calls(draw: st.DrawFn, arguments: st.SearchStrategy[Any] = args) -> list[Any]:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        call: dict[str, Any] = {"name": draw(texts), "args": draw(arguments), "id": draw(texts)}
        if draw(st.booleans()):
            call["type"] = "tool_call"
        calls.append(call)
    return calls


blocks = st.one_of(
    texts,
    st.fixed_dictionaries({"type": st.just("text"), "text": texts}),
    st.fixed_dictionaries({"type": st.just("image"), "url": texts}),
    st.fixed_dictionaries({"type": st.just("image_url"), "image_url": st.just({"url": "u"})}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": texts, "input": args}),
    st.dictionaries(texts, json_values, max_size=3),
)
contents = texts | st.lists(blocks, max_size=4)


@st.composite
def message(draw: st.DrawFn) -> BaseMessage:
    """A message of any class LangChain has, as an application would write it."""
    content, name = draw(contents), draw(names)
    kind = draw(st.integers(0, 10))
    if kind == 0:
        return HumanMessage(content, name=name)
    if kind == 1:
        return HumanMessageChunk(content=content, name=name)
    if kind == 2:
        return AIMessage(content, name=name, tool_calls=draw(tool_calls()))
    if kind == 3:
        calls = draw(tool_calls(json_args))
        return AIMessageChunk(content=content, name=name, tool_calls=calls)
    if kind == 4:
        role = draw(st.none() | texts)
        extra = {} if role is None else {"__openai_role__": role}
        return SystemMessage(content, name=name, additional_kwargs=extra)
    if kind == 5:
        return ToolMessage(content, tool_call_id=draw(texts), name=name)
    if kind == 6:
        return ToolMessageChunk(content=content, tool_call_id=draw(texts), name=name)
    if kind == 7:
        return ChatMessage(content=content, role=draw(texts), name=name)
    if kind == 8:
        return FunctionMessage(content=content, name=draw(texts))
    if kind == 9:
        return RemoveMessage(id=draw(texts))
    raw = {"tool_calls": [{"id": draw(texts), "type": "function",
                           "function": {"name": "f", "arguments": '{"a": 1}'}}]}  # fmt: skip
    return AIMessage(content, additional_kwargs=raw)  # calls the message parses itself


serdes = st.sampled_from([JsonPlusSerializer(), StrictSerializer()])


def counted(messages: Any) -> int | None:
    """LangChain's count of what the saver built; None when it cannot count it."""
    if not isinstance(messages, list) or not all(isinstance(m, BaseMessage) for m in messages):
        return None
    try:
        return count_tokens_approximately(messages)
    except Exception:
        return None


def loaded_and_bound(serde: Any, messages: list[Any]) -> tuple[Any, int | None]:
    type_, blob = serde.dumps_typed(messages)
    assert type_ == "msgpack"
    return serde.loads_typed((type_, blob)), history_bound(decode_plain(blob))


@SETTINGS
@given(st.lists(message(), max_size=6), serdes)
def test_the_bound_is_never_below_langchains_count(messages: list[Any], serde: Any) -> None:
    loaded, bound = loaded_and_bound(serde, messages)
    if bound is not None:
        count = counted(loaded)
        assert count is not None and count <= bound


ORDINARY = st.sampled_from([HumanMessage, AIMessage, SystemMessage, ToolMessage])


@st.composite
def ordinary(draw: st.DrawFn) -> BaseMessage:
    """What most stored histories hold: the four classes, string contents."""
    cls, content, name = draw(ORDINARY), draw(texts), draw(names)
    if cls is AIMessage:
        return AIMessage(content, name=name, tool_calls=draw(tool_calls()))
    if cls is ToolMessage:
        return ToolMessage(content, tool_call_id=draw(texts), name=name)
    return cls(content, name=name)  # type: ignore[no-any-return]


@SETTINGS
@given(st.lists(ordinary(), max_size=8), serdes)
def test_ordinary_histories_are_bounded_closely(messages: list[Any], serde: Any) -> None:
    """Only the call type the built message may add is allowed for: a call each."""
    loaded, bound = loaded_and_bound(serde, messages)
    calls = sum(len(getattr(m, "tool_calls", [])) for m in messages)
    assert bound is not None
    assert count_tokens_approximately(loaded) <= bound
    assert bound <= count_tokens_approximately(loaded) + calls * (
        CALL_TYPE_CHARS // CHARS_PER_TOKEN + 1
    )


odd_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 300)
    | st.sampled_from(["", "a", "image", "text", "__openai_role__"])
    | st.datetimes()
    | st.uuids(),  # stored as extensions
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "text", "id", "name", "args"]), inner, max_size=3
        )
    ),
    max_leaves=8,
)
FIELD_NAMES = [
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "tool_call_chunks",
    "additional_kwargs",
    "role",
    "id",
    "type",
]
CLASSES = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "ChatMessage": "chat",
    "FunctionMessage": "function",
    "RemoveMessage": "modifier",
}


@st.composite
def stored_message(draw: st.DrawFn) -> ormsgpack.Ext:
    """A message's stored fields of any shape, as LangGraph's serializer writes values
    (not every one builds a message). Bytes that do not decode at all are the pairing
    look's to send to the full load (`test_plain_look_previous`)."""
    name = draw(st.sampled_from(sorted(CLASSES)))
    module = f"langchain_core.messages.{CLASSES[name]}"
    fields = draw(st.dictionaries(st.sampled_from(FIELD_NAMES), odd_values, max_size=6))
    fields["content"] = draw(texts | odd_values)  # mostly one LangChain can count
    _, payload = JsonPlusSerializer().dumps_typed([module, name, fields, "model_validate"])
    return ormsgpack.Ext(5, payload)


@SETTINGS
@given(st.lists(stored_message(), max_size=5), serdes)
def test_odd_stored_fields_are_bounded_or_left_to_the_full_load(
    stored: list[ormsgpack.Ext], serde: Any
) -> None:
    blob = ormsgpack.packb(stored)
    try:
        decoded = decode_plain(blob)
    except Exception:  # the first look leaves what it cannot decode to the full load
        decoded = None
    bound = history_bound(decoded)
    if bound is not None:
        count = counted(serde.loads_typed(("msgpack", blob)))
        assert count is not None and count <= bound


def test_fields_holding_an_extension_are_left_to_the_full_load() -> None:
    """A datetime in a call's arguments is stored as an extension: its repr here would
    not be the built value's, so the history is not bounded; without it, it is."""
    serde = JsonPlusSerializer()
    call = {"name": "at", "args": {"when": datetime(2026, 1, 1)}, "id": "c1"}
    with_extension = [AIMessage("", tool_calls=[call]), ToolMessage("ok", tool_call_id="c1")]
    call["args"] = {"when": "2026-01-01"}
    without = [AIMessage("", tool_calls=[call]), ToolMessage("ok", tool_call_id="c1")]
    assert history_bound(decode_plain(serde.dumps_typed(with_extension)[1])) is None
    assert history_bound(decode_plain(serde.dumps_typed(without)[1])) is not None
