"""Rules for calls that live in more than one place: duplicate ids in one
message, every trace of a removed call, and unique synthetic ids."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai.chat_models.base import _construct_responses_api_input
from langgraph.graph.message import add_messages

from langgraph_checkpoint_repair import PendingCall, RepairAction, RepairPolicy, repair_messages
from tests.support.histories import ai, human, tool
from tests.support.oracle import assert_valid, responses_violations

DROP = RepairPolicy(dangling="drop_call")


def call(call_id: str, name: str = "t") -> Any:
    return {"name": name, "args": {}, "id": call_id}


def function_call(call_id: str, item: str) -> dict[str, Any]:
    return {"type": "function_call", "id": item, "call_id": call_id, "name": "t", "arguments": "{}"}


def test_duplicate_call_id_is_dropped_with_its_block_and_the_first_keeps_its_result() -> None:
    first = {"type": "tool_use", "id": "a", "name": "t", "input": {"n": 1}}
    second = {"type": "tool_use", "id": "a", "name": "t", "input": {"n": 2}}
    message = AIMessage([first, second], id="a1", tool_calls=[call("a"), call("a", "u")])
    history = [human("q"), message, tool("a"), human("next")]
    result = repair_messages(history)
    repaired = result.messages[1]
    assert isinstance(repaired, AIMessage)
    assert [c["id"] for c in repaired.tool_calls] == ["a"]
    assert repaired.content == [first]
    assert repaired.content[0] is message.content[0]
    assert result.messages[2] is history[2]
    assert result.actions == (RepairAction("duplicate_call_dropped", "a", "u", 1),)
    assert_valid(result.messages)


def test_a_second_result_for_a_duplicate_call_is_a_duplicate_result() -> None:
    message = AIMessage("", id="a1", tool_calls=[call("a"), call("a")])
    history = [message, tool("a", id="r1"), tool("a", id="r2"), human("next")]
    result = repair_messages(history)
    assert [m.id for m in result.messages] == ["a1", "r1", "h-next"]
    assert [a.kind for a in result.actions] == ["duplicate_call_dropped", "duplicate_dropped"]
    assert_valid(result.messages)


def test_duplicate_across_valid_and_invalid_calls_keeps_the_valid_one() -> None:
    bad = {"name": "t", "args": "{", "id": "a", "error": "bad json"}
    message = AIMessage("", id="a1", tool_calls=[call("a")], invalid_tool_calls=[bad])
    result = repair_messages([message, tool("a"), human("next")])
    repaired = result.messages[0]
    assert isinstance(repaired, AIMessage)
    assert repaired.invalid_tool_calls == []
    assert [a.kind for a in result.actions] == ["duplicate_call_dropped"]


def test_duplicate_legacy_openai_entry_goes_and_the_first_stays() -> None:
    raw = [{"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
    message = AIMessage(
        "",
        id="a1",
        tool_calls=[call("a"), call("a")],
        additional_kwargs={"tool_calls": [*raw, {**raw[0]}]},
    )
    repaired = repair_messages([message, tool("a")]).messages[0]
    assert repaired.additional_kwargs == {"tool_calls": raw}


def test_drop_call_removes_a_responses_function_call_and_the_reasoning_before_it() -> None:
    content: list[Any] = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        function_call("c1", "fc_1"),
    ]
    message = AIMessage(content, id="a1", tool_calls=[call("c1")])
    result = repair_messages([human("q"), message, human("next")], policy=DROP)
    repaired = result.messages[1]
    assert repaired.content == []
    assert repaired.tool_calls == []  # type: ignore[attr-defined]
    assert responses_violations(result.messages) == []


def test_drop_call_keeps_reasoning_still_followed_by_a_kept_call() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    kept = function_call("c2", "fc_2")
    content: list[Any] = [reasoning, function_call("c1", "fc_1"), kept]
    message = AIMessage(content, id="a1", tool_calls=[call("c1"), call("c2")])
    history = [human("q"), message, tool("c2"), human("next")]
    result = repair_messages(history, policy=DROP)
    repaired = result.messages[1]
    assert repaired.content == [reasoning, kept]
    assert repaired.content[1] is message.content[2]
    assert responses_violations(result.messages) == []


def test_drop_call_removes_custom_and_standard_tool_call_blocks() -> None:
    custom = {"type": "custom_tool_call", "call_id": "c1", "name": "t", "input": "x"}
    standard = {"type": "tool_call", "id": "c2", "name": "t", "args": {}}
    text = {"type": "text", "text": "working"}
    message = AIMessage([text, custom, standard], id="a1", tool_calls=[call("c1"), call("c2")])
    result = repair_messages([message, human("next")], policy=DROP)
    assert result.messages[0].content == [text]
    assert responses_violations(result.messages) == []


def test_drop_call_removes_a_call_wrapped_in_a_non_standard_block() -> None:
    wrapped = {"type": "non_standard", "value": function_call("c1", "fc_1")}
    message = AIMessage([{"type": "text", "text": "x"}, wrapped], id="a1", tool_calls=[call("c1")])
    result = repair_messages([message, human("next")], policy=DROP)
    assert result.messages[0].content == [{"type": "text", "text": "x"}]


def test_drop_call_in_langchain_openai_v03_format_leaves_no_lonely_reasoning() -> None:
    message = AIMessage(
        [],
        id="msg_1",
        tool_calls=[call("c1")],
        additional_kwargs={
            "reasoning": {"type": "reasoning", "id": "rs_1", "summary": []},
            "__openai_function_call_ids__": {"c1": "fc_1"},
        },
        response_metadata={"id": "resp_1"},
    )
    result = repair_messages([human("q"), message, human("next")], policy=DROP)
    assert result.messages[1].additional_kwargs == {"__openai_function_call_ids__": {}}
    assert responses_violations(result.messages) == []


def test_blocks_of_calls_that_stay_are_the_same_objects() -> None:
    kept = {"type": "tool_use", "id": "c2", "name": "t", "input": {}}
    gone = {"type": "tool_use", "id": "c1", "name": "t", "input": {}}
    message = AIMessage([gone, kept], id="a1", tool_calls=[call("c1"), call("c2")])
    result = repair_messages([message, tool("c2"), human("next")], policy=DROP)
    assert result.messages[0].content == [kept]
    assert result.messages[0].content[0] is message.content[1]


def test_synthetic_ids_differ_when_call_ids_repeat_and_ai_messages_have_no_id() -> None:
    def turn(text: str) -> list[BaseMessage]:
        return [HumanMessage(text, id=f"h-{text}"), AIMessage("", tool_calls=[call("call_0")])]

    history = [*turn("a"), *turn("b"), *turn("c")]
    repaired = repair_messages(history).messages
    synthetic = [m.id for m in repaired if isinstance(m, ToolMessage)]
    assert synthetic == ["repair-call_0-1", "repair-call_0-3", "repair-call_0-5"]
    assert repair_messages(history).messages == repaired
    copies = [m.model_copy() for m in repaired]  # add_messages gives id-less messages an id
    assert len(add_messages([], copies)) == len(repaired)  # type: ignore[arg-type]


def test_synthetic_ids_differ_when_two_ai_messages_share_an_id() -> None:
    history = [ai("same", "c1"), human("b"), ai("same", "c1")]
    repaired = repair_messages(history).messages
    ids = [m.id for m in repaired if isinstance(m, ToolMessage)]
    assert ids == ["repair-c1-same", "repair-c1-same-2"]


def test_responses_request_of_a_repaired_history_pairs_every_call() -> None:
    content: list[Any] = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        function_call("c1", "fc_1"),
    ]
    history = [human("q"), AIMessage(content, id="a1", tool_calls=[call("c1")]), human("next")]
    repaired = repair_messages(history).messages
    items = _construct_responses_api_input(repaired)
    kinds = [item.get("type") for item in items]
    assert kinds.count("function_call") == kinds.count("function_call_output") == 1


def test_a_failing_placeholder_callable_runs_once_and_its_error_is_raised() -> None:
    seen: list[str] = []

    def text(call: PendingCall) -> str:
        seen.append(call.id)
        raise ValueError("no text today")

    with pytest.raises(ValueError, match="no text today"):
        repair_messages([ai("a1", "c1"), human("b")], policy=RepairPolicy(placeholder=text))
    assert seen == ["c1"]
