"""LangChain.js's values read with LangChain's reviver (messages only) and written in the
form LangChain.js revives; LangGraph.js's checkpoints told apart and shaped."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_checkpoint_repair.decoding.strict import StrictSerializer
from langgraph_checkpoint_repair.engine import repair_messages
from langgraph_checkpoint_repair.js import rows
from langgraph_checkpoint_repair.js.values import JsJsonSerializer, dumps_js, js_serde, loads_js
from langgraph_checkpoint_repair.stores.postgres.js_saver import without_task_path
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.generated import messy_history
from tests.support.js_rows import langgraph_js_sqlite_store

# As LangGraph.js 1.7.3 stored them (tests/js_app): a message field left `undefined`.
JS_HISTORY = (
    b'[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],'
    b'"kwargs":{"content":"weather in Paris","additional_kwargs":{},"response_metadata":{},'
    b'"id":"h1"}},{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],'
    b'"kwargs":{"content":"","id":"ai-0","tool_calls":[{"id":"call_0","name":"get_weather",'
    b'"args":{"city":"Paris"},"type":"tool_call"}],"invalid_tool_calls":[],'
    b'"additional_kwargs":{},"response_metadata":{},"name":{"lc":2,"type":"undefined"}}}]'
)
PROMPT = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain_core", "prompts", "PromptTemplate"],
    "kwargs": {"template": "{x}", "input_variables": ["x"]},
}


def test_langgraph_js_messages_are_built_and_undefined_fields_are_absent() -> None:
    value, refused = loads_js(JS_HISTORY)
    assert refused == set()
    human, ai = value
    assert human == HumanMessage("weather in Paris", id="h1")
    assert isinstance(ai, AIMessage) and ai.name is None
    assert ai.tool_calls == [
        {"id": "call_0", "name": "get_weather", "args": {"city": "Paris"}, "type": "tool_call"}
    ]
    assert repair_messages(value).changed


def test_any_other_constructor_stays_plain_data_and_is_refused() -> None:
    strict = StrictSerializer()
    serde = JsJsonSerializer.sharing(strict)
    blob = json.dumps({"prompt": PROMPT, "messages": json.loads(JS_HISTORY)}).encode()
    value = serde.loads_typed(("json", blob))
    assert value["prompt"] == PROMPT
    assert isinstance(value["messages"][1], AIMessage)
    assert strict.refused == {"langchain_core.prompts.PromptTemplate"}


def test_json_values_without_langchain_js_marks_are_langgraphs_to_read() -> None:
    serde = JsJsonSerializer()
    assert serde.loads_typed(("json", b'{"messages":[{"role":"user","content":"hi"}]}')) == {
        "messages": [{"role": "user", "content": "hi"}]
    }
    assert serde.loads_typed(("json", b"null")) is None
    assert serde.dumps_typed(["a"]) == StrictSerializer().dumps_typed(["a"])


@settings(max_examples=60, deadline=None)
@given(messy_history())
def test_messages_written_for_langchain_js_read_back_equal(history: list[BaseMessage]) -> None:
    blob = dumps_js(history)
    stored = json.loads(blob)
    assert all(m["id"][:2] == ["langchain_core", "messages"] for m in stored)
    assert all("type" not in m["kwargs"] for m in stored)
    value, refused = loads_js(blob)
    assert value == history and refused == set()


def test_a_synthetic_result_is_written_as_langchain_js_builds_a_tool_message() -> None:
    result = ToolMessage("cancelled", tool_call_id="call_0", name="get_weather", status="error")
    [stored] = json.loads(dumps_js([result]))
    assert stored == {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", "ToolMessage"],
        "kwargs": {
            "content": "cancelled",
            "tool_call_id": "call_0",
            "name": "get_weather",
            "status": "error",
        },
    }


def test_langgraph_js_checkpoints_are_told_apart_by_their_versions() -> None:
    assert rows.is_js_checkpoint({"channel_versions": {"messages": 7, "__start__": 2}})
    python = PostgresSaver.get_next_version(PostgresSaver.__new__(PostgresSaver), None, None)
    assert not rows.is_js_checkpoint({"channel_versions": {"messages": python}})
    assert not rows.is_js_checkpoint({"channel_versions": {"flag": True}})
    assert rows.next_version(7) == 8 and rows.next_version(None) == 1


def test_the_checkpoint_row_is_shaped_as_langgraph_js_writes_it() -> None:
    checkpoint = {
        "v": 4,
        "id": "1f1ea180-83e6-6ea0-ffff-fdb139c7288a",
        "ts": "2026-11-27T04:07:16.362512+00:00",
        "channel_values": {"messages": []},
        "channel_versions": {"messages": 3},
        "versions_seen": {"agent": {"branch:to:agent": 2}},
        "pending_sends": [],
        "updated_channels": ["messages"],
    }
    assert rows.checkpoint_json(checkpoint) == {
        "v": 4,
        "id": checkpoint["id"],
        "ts": "2026-11-27T04:07:16.362Z",
        "channel_versions": {"messages": 3},
        "versions_seen": {"agent": {"branch:to:agent": 2}},
    }


def test_langgraphs_queries_read_tables_without_task_path() -> None:
    for query in (PostgresSaver.SELECT_SQL, PostgresSaver.SELECT_PENDING_SENDS_SQL):
        assert "task_path" not in without_task_path(query)


def test_a_saver_opened_without_a_serializer_reads_as_langgraphs_default() -> None:
    """The Agent Server drop-in opens the application's own store this way: its values
    load as LangGraph's default serializer loads them, not strictly."""
    default = js_serde(None)
    assert isinstance(default, JsonPlusSerializer) and not isinstance(default, StrictSerializer)
    value = Decimal("1.5")
    assert default.loads_typed(default.dumps_typed(value)) == value
    assert default.loads_typed(("json", JS_HISTORY))[1].tool_calls[0]["id"] == "call_0"
    strict = StrictSerializer()
    shared = js_serde(strict)
    assert isinstance(shared, JsJsonSerializer) and shared.refused is strict.refused
    own = JsonPlusSerializer()
    assert js_serde(own) is own


@pytest.mark.parametrize("is_async", [False, True])
async def test_no_pending_write_is_written_to_a_langgraph_js_sqlite_thread(
    tmp_path: Path, is_async: bool
) -> None:
    """A write of LangGraph's own format there would be unreadable to the application:
    the saver refuses it, and the file is left as it was."""
    path = tmp_path / "js-threads.sqlite"
    langgraph_js_sqlite_store(path, ["js-1"])
    config: Any = {"configurable": {"thread_id": "js-1", "checkpoint_ns": ""}}
    async with aopen_saver(f"sqlite:///{path}") if is_async else _sync(path) as saver:
        tup = await saver.aget_tuple(config) if is_async else saver.get_tuple(config)
        assert tup is not None
        with pytest.raises(NotImplementedError, match=r"LangGraph\.js thread"):
            if is_async:
                await saver.aput_writes(tup.config, [("notes", "x")], "task-1")
            else:
                saver.put_writes(tup.config, [("notes", "x")], "task-1")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM writes").fetchone() == (0,)


@contextlib.asynccontextmanager
async def _sync(path: Path) -> Any:
    with open_saver(f"sqlite:///{path}") as saver:
        yield saver
