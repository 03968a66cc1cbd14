"""The first look at a LangGraph.js head follows the full load: it never clears a
history the full load would repair, it clears every plain clean one, and anything odd
(a class LangChain.js and Python do not share, a nested constructor the full load
refuses, a field left `undefined`, bytes that are not JSON) goes to the full load."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_checkpoint_repair.engine import repair_messages
from langgraph_checkpoint_repair.js.values import MESSAGE_CLASSES, dumps_js, loads_js
from langgraph_checkpoint_repair.stores.first_look.helper import LookHelper
from langgraph_checkpoint_repair.stores.first_look.js_look import JS_MESSAGE_CLASSES
from langgraph_checkpoint_repair.stores.first_look.plain import (
    JS_HISTORIES,
    js_blob_is_clean,
    js_checkpoint_verdict,
    js_verdicts,
)
from tests.engine.test_engine_proof import valid_history
from tests.support.generated import messy_history

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UNDEFINED = {"lc": 2, "type": "undefined"}


def full_load_repairs(blob: bytes) -> bool:
    """What the full load decides: the messages LangChain's reviver builds, repaired."""
    value, refused = loads_js(blob)
    return bool(refused) or repair_messages(value).changed


def sqlite_row(history: list[BaseMessage], **others: Any) -> bytes:
    """A checkpoint row as LangGraph.js's SQLite saver writes it: values inline."""
    values = {"messages": history, "branch:to:agent": None, **others}
    return dumps_js({"v": 4, "id": "c", "channel_values": values, "channel_versions": {}})


@SETTINGS
@given(messy_history())
def test_it_never_clears_a_history_the_full_load_would_repair(history: list[BaseMessage]) -> None:
    blob = dumps_js(history)
    if js_blob_is_clean(blob):
        assert not full_load_repairs(blob)
    if js_checkpoint_verdict(sqlite_row(history), ["messages"])[0]:
        assert not full_load_repairs(blob)


@SETTINGS
@given(valid_history())
def test_it_clears_every_plain_clean_history(history: list[BaseMessage]) -> None:
    blob = dumps_js(history)
    assert not full_load_repairs(blob)
    assert js_blob_is_clean(blob)
    assert js_checkpoint_verdict(sqlite_row(history), ["messages"]) == (
        True,
        frozenset({"messages"}),
    )


def test_a_sqlite_row_with_a_constructor_elsewhere_goes_to_the_full_load() -> None:
    ai = AIMessage("", id="a", tool_calls=[{"id": "c", "name": "t", "args": {}}])
    history = [ai, ToolMessage("r", tool_call_id="c")]
    assert js_checkpoint_verdict(sqlite_row(history), ["messages", "other"])[0]
    hidden = sqlite_row(history, other={"x": [AIMessage("hidden")]})
    assert js_checkpoint_verdict(hidden, ["messages"]) == (False, frozenset())
    assert js_checkpoint_verdict(sqlite_row(history, notes="text"), ["notes"]) == (
        False,
        frozenset(),
    )
    assert js_checkpoint_verdict(b"{}", ["messages"]) == (False, frozenset())


def stored(history: list[BaseMessage]) -> Any:
    return json.loads(dumps_js(history))


@given(valid_history().filter(bool), st.data())
@settings(max_examples=100, deadline=None)
def test_anything_odd_goes_to_the_full_load(
    history: list[BaseMessage], data: st.DataObject
) -> None:
    items = stored(history)
    n = data.draw(st.integers(0, len(items) - 1))
    oddity = data.draw(st.sampled_from(list(ODDITIES)))
    ODDITIES[oddity](items[n])
    assert not js_blob_is_clean(json.dumps(items).encode()), oddity


def _nested_constructor(item: dict[str, Any]) -> None:
    item["kwargs"]["additional_kwargs"] = {
        "prompt": {"lc": 1, "type": "constructor", "id": ["x", "Y"], "kwargs": {}}
    }


def _set(key: str, value: Any) -> Any:
    return lambda item: item.__setitem__(key, value)


ODDITIES = {
    "ChatMessage": lambda item: item["id"].__setitem__(2, "ChatMessage"),
    "legacy id": _set("id", ["langchain", "schema", "messages", "AIMessage"]),
    "short id": lambda item: item["id"].pop(0),
    "another namespace": lambda item: item["id"].__setitem__(1, "prompts"),
    "lc 2": _set("lc", 2),
    "not a constructor": _set("type", "secret"),
    "kwargs a list": _set("kwargs", []),
    "nested constructor": _nested_constructor,
    "not a message": lambda item: item.clear(),
}


def test_a_field_left_undefined_where_pairing_reads_it_goes_to_the_full_load() -> None:
    history = [AIMessage("", id="a", tool_calls=[{"id": "c", "name": "t", "args": {}}])]
    items = stored([*history, ToolMessage("r", tool_call_id="c")])
    assert js_blob_is_clean(json.dumps(items).encode())
    items[1]["kwargs"]["tool_call_id"] = UNDEFINED
    assert not js_blob_is_clean(json.dumps(items).encode())


def test_what_is_not_a_stored_history_goes_to_the_full_load() -> None:
    for blob in (b"", b"not json", b"{}", b"null", b"[1]", b'[{"lc": 1}]', b"\xff\xfe"):
        assert not js_blob_is_clean(blob)
    assert js_blob_is_clean(b"[]")


def test_the_classes_are_the_full_loads() -> None:
    assert {cls.__name__ for cls in MESSAGE_CLASSES} == JS_MESSAGE_CLASSES


def test_under_a_budget_every_head_is_loaded() -> None:
    assert not js_blob_is_clean(b"[]", budget=10**9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messy_history(), min_size=70, max_size=90))
def test_the_helper_answers_as_this_process_does(histories: list[list[BaseMessage]]) -> None:
    blobs = [dumps_js(history) for history in histories] + [b"[", b"[]"]
    with LookHelper() as helper:
        assert helper.judge(blobs, JS_HISTORIES) == js_verdicts(blobs)
        assert helper.process is not None  # it answered: nothing was given up
