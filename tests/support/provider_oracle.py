"""Each provider's rules beyond pairing, checked on the request its LangChain converter
builds from a history (Anthropic `_format_messages`, OpenAI Chat `_convert_message_to_dict`,
the Responses input converter, langchain-mistralai, langchain-aws Converse)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from langchain_aws.chat_models.bedrock_converse import _messages_to_bedrock
from langchain_core.messages import AIMessage, BaseMessage
from langchain_mistralai.chat_models import _convert_message_to_mistral_chat_message
from langchain_openai.chat_models.base import (
    _construct_responses_api_input,
    _convert_message_to_dict,
)

from tests.support.mixed_histories import CLAUDE_SIGNATURE
from tests.support.oracle import anthropic_request, anthropic_violations, openai_violations

ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
BEDROCK_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
CHAT_CONTENT_TYPES = {"text", "image_url", "input_audio", "refusal", "audio", "file"}


def anthropic_request_problems(messages: Sequence[BaseMessage]) -> list[str]:
    payload = anthropic_request(messages)
    problems = anthropic_violations(messages)
    uses = [b["id"] for turn in payload for b in _blocks(turn) if b.get("type") == "tool_use"]
    problems += _repeats("anthropic: `tool_use` ids must be unique", uses)
    problems += [
        f"anthropic: tool_use id {u!r} breaks the pattern"
        for u in uses
        if not ANTHROPIC_ID.fullmatch(u)
    ]
    for n, turn in enumerate(payload):
        final = n == len(payload) - 1 and turn["role"] == "assistant"
        problems += _anthropic_turn_problems(n, turn, final)
    return problems


def _anthropic_turn_problems(n: int, turn: dict[str, Any], final: bool) -> list[str]:
    content, problems = turn["content"], []
    if not final and (content == [] or (isinstance(content, str) and not content.strip())):
        problems.append(f"anthropic: messages.{n}: all messages must have non-empty content")
    for block in _blocks(turn):
        kind = block.get("type")
        if kind == "text" and not str(block.get("text", "")).strip():
            problems.append(f"anthropic: messages.{n}: text content blocks must be non-empty")
        if kind == "thinking" and not str(block.get("signature", "")).startswith(CLAUDE_SIGNATURE):
            problems.append(f"anthropic: messages.{n}: Invalid `signature` in `thinking` block")
        if kind == "redacted_thinking" and not block.get("data"):
            problems.append(f"anthropic: messages.{n}: redacted_thinking without data")
        if kind == "reasoning_content":
            problems.append(f"anthropic: messages.{n}: unknown block type reasoning_content")
        if kind == "tool_result" and block.get("is_error") and _empty(block.get("content")):
            problems.append(
                f"anthropic: messages.{n}.tool_result: "
                "content cannot be empty if `is_error` is true"
            )
    return problems


def openai_chat_request_problems(messages: Sequence[BaseMessage]) -> list[str]:
    payload = [_convert_message_to_dict(m) for m in messages]
    problems = openai_violations(messages)
    ids = [c["id"] for item in payload for c in item.get("tool_calls") or []]
    problems += _repeats("openai: Duplicate value for 'tool_call_id'", ids)
    problems += [f"openai: tool_calls id too long ({len(i)} > 40)" for i in ids if len(i) > 40]
    for n, item in enumerate(payload):
        content = item.get("content")
        if item["role"] == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") not in CHAT_CONTENT_TYPES:
                    problems.append(
                        f"openai: Invalid value: {block.get('type')!r} in messages[{n}]"
                    )
    return problems


def responses_request_problems(messages: Sequence[BaseMessage]) -> list[str]:
    items = _construct_responses_api_input(messages)
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    problems = _repeats("responses: function_call call_id used twice", calls)
    problems += [f"responses: call_id too long ({len(c)} > 64)" for c in calls if len(c) > 64]
    problems += [
        f"responses: No tool call found for function call output with call_id {o}"
        for o in outputs
        if o not in calls
    ]
    problems += [
        f"responses: No tool output found for function call {c}" for c in calls if c not in outputs
    ]
    for item in items:
        if item.get("type") == "reasoning" and not (
            item.get("id") or item.get("encrypted_content")
        ):
            problems.append("responses: reasoning item with no id and no encrypted content")
    for message in messages:
        if isinstance(message, AIMessage):
            problems += _unfollowed_reasoning(_construct_responses_api_input([message]))
    return problems


def _unfollowed_reasoning(items: list[dict[str, Any]]) -> list[str]:
    """Within one message's items, each reasoning item needs a later non-reasoning item."""
    kinds = [i.get("type") for i in items]
    last_output = max((n for n, k in enumerate(kinds) if k != "reasoning"), default=-1)
    return [
        f"responses: Item {items[n].get('id')!r} of type 'reasoning' was provided "
        "without its required following item."
        for n, k in enumerate(kinds)
        if k == "reasoning" and n > last_output
    ]


def mistral_request_problems(messages: Sequence[BaseMessage]) -> list[str]:
    """Mistral: the converter maps ids to 9 characters one to one; each must be unique."""
    payload = [_convert_message_to_mistral_chat_message(m) for m in messages]
    turns = [(_chat_call_ids(item), item.get("tool_call_id")) for item in payload]
    return _turn_pairing("mistral", turns, MISTRAL_ID)


def bedrock_request_problems(messages: Sequence[BaseMessage]) -> list[str]:
    """Bedrock Converse: toolUseId sent as stored, answered by the next user turn."""
    payload, _ = _messages_to_bedrock(list(messages))
    turns: list[Turn] = []
    for item in payload:
        blocks = [b for b in item["content"] if isinstance(b, dict)]
        turns += [([], b["toolResult"]["toolUseId"]) for b in blocks if "toolResult" in b]
        if any("toolResult" not in b for b in blocks):  # the turn says more than results
            uses = [b["toolUse"]["toolUseId"] for b in blocks if "toolUse" in b]
            turns.append((uses, None))
    return _turn_pairing("bedrock", turns, BEDROCK_ID)


def _chat_call_ids(item: dict[str, Any]) -> list[str]:
    return [str(c["id"]) for c in item.get("tool_calls") or []]


Turn = tuple[list[str], str | None]
"""A request item: the calls it makes, or the call a result answers."""


def _turn_pairing(provider: str, turns: list[Turn], pattern: re.Pattern[str]) -> list[str]:
    """Every call id unique and well-formed, and answered by the results right after it."""
    ids = [i for calls, _ in turns for i in calls]
    problems = _repeats(f"{provider}: duplicate tool call id", ids)
    problems += [
        f"{provider}: tool call id {i!r} breaks {pattern.pattern}"
        for i in ids
        if not pattern.fullmatch(i)
    ]
    waiting: list[str] = []
    for calls, answer in turns:
        if answer is not None:
            if answer not in waiting:
                problems.append(f"{provider}: result {answer!r} answers no pending call")
            else:
                waiting.remove(answer)
            continue
        if waiting:
            problems.append(f"{provider}: calls {waiting} unanswered")
        waiting = list(calls)
    return problems


REQUEST_PROBLEMS: dict[str, Callable[[Sequence[BaseMessage]], list[str]]] = {
    "anthropic": anthropic_request_problems,
    "openai": openai_chat_request_problems,
    "openai-responses": responses_request_problems,
    "bedrock": bedrock_request_problems,
    "mistral": mistral_request_problems,
}


def _repeats(problem: str, values: list[str]) -> list[str]:
    return [f"{problem}: {v!r}" for v, count in Counter(values).items() if count > 1]


def _blocks(turn: dict[str, Any]) -> list[dict[str, Any]]:
    content = turn["content"]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _empty(content: Any) -> bool:
    if isinstance(content, str):
        return not content.strip()
    return not content
