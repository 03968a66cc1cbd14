"""The provider-rule oracle: format a history with the real provider converters
and check the tool-call pairing rules on what they produce."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_anthropic.chat_models import _format_messages
from langchain_core.messages import AIMessage, BaseMessage
from langchain_openai.chat_models.base import (
    _construct_responses_api_input,
    _convert_message_to_dict,
)

from langgraph_checkpoint_repair.compatibility.features import installed_version

_TAKES_MODEL = "model" in inspect.signature(_format_messages).parameters


def anthropic_request(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The `messages` of the request langchain-anthropic builds (`model=` since 1.1)."""
    format_messages: Any = _format_messages
    settings = {"model": "claude"} if _TAKES_MODEL else {}
    payload: list[dict[str, Any]] = format_messages(messages, **settings)[1]
    return payload


def openai_violations(messages: Sequence[BaseMessage]) -> list[str]:
    """Chat Completions: each assistant call answered once in the tool run right after it."""
    payload = [_convert_message_to_dict(m) for m in messages]
    problems: list[str] = []
    waiting: list[str] | None = None
    for n, item in enumerate(payload):
        if item["role"] == "tool":
            if waiting is None or item["tool_call_id"] not in waiting:
                problems.append(f"openai: tool message {n} answers no pending call")
            else:
                waiting.remove(item["tool_call_id"])
            continue
        if waiting:
            problems.append(f"openai: calls {waiting} unanswered before message {n}")
        waiting = None
        if item["role"] == "assistant" and item.get("tool_calls"):
            ids = [c["id"] for c in item["tool_calls"]]
            if len(set(ids)) != len(ids):
                problems.append(f"openai: duplicate call ids in message {n}")
            waiting = ids
    if waiting:
        problems.append(f"openai: calls {waiting} unanswered at the end")
    return problems


def anthropic_violations(messages: Sequence[BaseMessage]) -> list[str]:
    """Messages API: each tool_use answered by a tool_result in the very next user turn."""
    payload = anthropic_request(messages)
    problems: list[str] = []
    previous_uses: list[str] = []
    for n, turn in enumerate(payload):
        blocks = _blocks(turn)
        if turn["role"] == "user":
            results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
            if sorted(results) != sorted(previous_uses):
                problems.append(f"anthropic: turn {n} answers {results}, expected {previous_uses}")
            previous_uses = []
        else:
            if previous_uses:
                problems.append(f"anthropic: tool_use {previous_uses} not answered at {n}")
            previous_uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            if len(set(previous_uses)) != len(previous_uses):
                problems.append(f"anthropic: duplicate tool_use ids in turn {n}")
    if previous_uses:
        problems.append(f"anthropic: tool_use {previous_uses} unanswered at the end")
    return problems


CALL_ITEMS = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}
OUTPUT_ITEMS = set(CALL_ITEMS.values())


def responses_violations(messages: Sequence[BaseMessage]) -> list[str]:
    """Responses API: every call item has one output after it and every output a
    call before it; a reasoning item is followed by an item of the same answer."""
    items = _construct_responses_api_input(messages)
    problems: list[str] = []
    open_calls: list[str] = []
    for n, item in enumerate(items):
        kind = item.get("type")
        if kind in CALL_ITEMS:
            if item["call_id"] in open_calls:
                problems.append(f"responses: call {item['call_id']} sent twice at {n}")
            open_calls.append(item["call_id"])
        elif kind in OUTPUT_ITEMS:
            if item["call_id"] not in open_calls:
                problems.append(f"responses: output {item['call_id']} at {n} answers no call")
            else:
                open_calls.remove(item["call_id"])
        elif kind == "reasoning" and not _follows_reasoning(items[n + 1 : n + 2]):
            problems.append(f"responses: reasoning item {n} without its following item")
    if open_calls:
        problems.append(f"responses: calls {open_calls} without output")
    return problems


def _follows_reasoning(following: list[dict[str, Any]]) -> bool:
    if not following:
        return False
    item = following[0]
    if item.get("type") == "message":
        return item.get("role") == "assistant"
    return item.get("type") not in OUTPUT_ITEMS and "role" not in item


def _blocks(turn: dict[str, Any]) -> list[dict[str, Any]]:
    content = turn["content"]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def violations(messages: Sequence[BaseMessage]) -> list[str]:
    """Every way `messages` breaks either provider's pairing rules."""
    return openai_violations(messages) + anthropic_violations(messages)


def assert_valid(messages: Sequence[BaseMessage]) -> None:
    problems = violations(messages)
    assert not problems, problems


def _anthropic_sends_invalid_calls() -> bool:
    """Newer langchain-anthropic sends `invalid_tool_calls` as `tool_use` blocks; older releases
    drop them, so a result answering one answers nothing there, whatever we repair."""
    call = {"type": "invalid_tool_call", "id": "c1", "name": "t", "args": "{", "error": "bad"}
    turn = anthropic_request([AIMessage("", invalid_tool_calls=[call])])[0]
    return any(block.get("id") == "c1" for block in _blocks(turn))


def _anthropic_maps_bad_ids() -> bool:
    """Newer langchain-anthropic maps an id outside Anthropic's pattern to a `toolu_` id."""
    call = {"id": "functions.t:0", "name": "t", "args": {}}
    turn = anthropic_request([AIMessage("", tool_calls=[call])])[0]
    return all(block.get("id") != "functions.t:0" for block in _blocks(turn))


ANTHROPIC_CONVERTER = f"langchain-anthropic {installed_version('langchain-anthropic')}"
needs_anthropic_invalid_calls = pytest.mark.skipif(
    not _anthropic_sends_invalid_calls(),
    reason=f"{ANTHROPIC_CONVERTER} does not send invalid tool calls to Claude",
)
needs_anthropic_id_mapping = pytest.mark.skipif(
    not _anthropic_maps_bad_ids(),
    reason=f"{ANTHROPIC_CONVERTER} does not map invalid tool call ids",
)
