"""The providers' own converters (langchain-anthropic, -openai, -aws) on a trimmed
history: each builds a valid request, the marker a plain user turn with no stray
field, every kept call answered in the next turn."""

from __future__ import annotations

import itertools

import pytest
from langchain_aws.chat_models.bedrock_converse import _messages_to_bedrock
from langchain_core.messages import BaseMessage
from langchain_openai.chat_models.base import (
    _construct_responses_api_input,
    _convert_message_to_dict,
)

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from tests.support.context import long_task
from tests.support.oracle import anthropic_request, violations

POLICY = RepairPolicy(max_input_tokens=3000)


@pytest.fixture(scope="module")
def trimmed() -> list[BaseMessage]:
    result = repair_messages(long_task(60), policy=POLICY)
    assert [a.kind for a in result.actions] == ["context_trimmed"]
    return result.messages


def test_the_pairing_rules_hold_for_every_provider(trimmed: list[BaseMessage]) -> None:
    assert violations(trimmed) == []


def test_anthropic_gets_the_marker_as_the_first_user_turn(trimmed: list[BaseMessage]) -> None:
    turns = anthropic_request(trimmed)
    assert turns[0]["role"] == "user" and "earlier messages" in str(turns[0]["content"])
    roles = [t["role"] for t in turns]
    assert all(a != b for a, b in itertools.pairwise(roles))  # roles alternate
    for asked, answered in zip(turns[1::2], turns[2::2], strict=False):
        uses = [b["id"] for b in asked["content"] if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in answered["content"] if isinstance(b, dict)]
        assert uses == [r for r in results if r in uses]


def test_openai_gets_the_marker_as_a_plain_user_message(trimmed: list[BaseMessage]) -> None:
    sent = [_convert_message_to_dict(m) for m in trimmed]
    assert sent[0]["role"] == "system"
    assert set(sent[1]) == {"role", "content"} and sent[1]["role"] == "user"
    responses = _construct_responses_api_input(trimmed)
    calls = {i["call_id"] for i in responses if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in responses if i.get("type") == "function_call_output"}
    assert calls == outputs and calls


def test_bedrock_gets_alternating_turns_opening_with_the_user(trimmed: list[BaseMessage]) -> None:
    turns, system = _messages_to_bedrock(list(trimmed))
    assert system and turns[0]["role"] == "user"
    roles = [t["role"] for t in turns]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert "earlier messages" in str(turns[0]["content"])
