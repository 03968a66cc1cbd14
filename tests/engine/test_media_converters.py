"""The providers' own converters (langchain-anthropic, -openai, -aws) on histories the
content rules repaired: what they would send is within each provider's limits."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_aws.chat_models.bedrock_converse import _messages_to_bedrock
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai.chat_models.base import _convert_message_to_dict
from PIL import Image

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from tests.support.media import ANTHROPIC_LIMIT, b64, block_forms, document_forms, png_bytes
from tests.support.oracle import anthropic_request

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.fixture(scope="module")
def history() -> list[BaseMessage]:
    """A screenshot over 5 MB, a 9000 px wide image and a .docx, in tool results."""
    big = b64(png_bytes(1200, 1200, noise=True, seed=7))
    wide = b64(png_bytes(9000, 8))
    calls = [{"name": "shot", "args": {}, "id": f"toolu_{n}"} for n in range(3)]
    return [
        HumanMessage(content="look at these", id="h"),
        AIMessage(content="", tool_calls=calls, id="a"),
        ToolMessage(content=[block_forms(big, "image/png")["standard"]], tool_call_id="toolu_0"),
        ToolMessage(content=[block_forms(wide, "image/png")["anthropic"]], tool_call_id="toolu_1"),
        ToolMessage(
            content=[document_forms(b64(b"PK\x03\x04docx"), DOCX)["standard"]],
            tool_call_id="toolu_2",
        ),
        AIMessage(content="I see them", id="z"),
    ]


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict in a request payload."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def anthropic_problems(messages: list[BaseMessage]) -> list[str]:
    problems = []
    for part in walk(anthropic_request(messages)):
        source = part.get("source")
        if part.get("type") == "image" and isinstance(source, dict) and "data" in source:
            if len(source["data"]) > ANTHROPIC_LIMIT:
                problems.append(f"image exceeds 5 MB maximum: {len(source['data'])} bytes")
            if max(Image.open(io.BytesIO(base64.b64decode(source["data"]))).size) > 8000:
                problems.append("image dimensions exceed max allowed size: 8000 pixels")
        declared = source.get("media_type") if isinstance(source, dict) else None
        if part.get("type") == "document" and declared not in ("application/pdf", "text/plain"):
            problems.append("media_type: Input should be 'application/pdf'")
    return problems


def test_the_anthropic_converter_sends_what_claude_takes(history: list[BaseMessage]) -> None:
    assert len(anthropic_problems(history)) == 3
    repaired = repair_messages(history, policy=RepairPolicy(provider="anthropic")).messages
    assert anthropic_problems(repaired) == []
    results = [m for m in anthropic_request(repaired) if m["role"] == "user"][1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_0", "toolu_1", "toolu_2"]


@pytest.mark.filterwarnings("ignore:OpenAI may require a filename")
def test_the_openai_converter_sends_no_image_in_a_tool_message(history: list[BaseMessage]) -> None:
    def tool_parts(messages: list[BaseMessage]) -> list[str]:
        sent = [_convert_message_to_dict(m) for m in messages]
        return [
            part.get("type", "?")
            for message in sent
            if message["role"] == "tool" and isinstance(message["content"], list)
            for part in message["content"]
            if part.get("type") != "text"
        ]

    assert tool_parts(history)
    repaired = repair_messages(history, policy=RepairPolicy(provider="openai")).messages
    assert tool_parts(repaired) == []


@pytest.mark.filterwarnings("ignore:Bedrock Converse may require a filename")
def test_the_bedrock_converter_sends_images_within_3_75_mb(history: list[BaseMessage]) -> None:
    def largest_image(messages: list[BaseMessage]) -> int:
        payload, _ = _messages_to_bedrock(list(messages))
        sizes = [len(part["image"]["source"]["bytes"]) for part in walk(payload) if "image" in part]
        return max(sizes, default=0)

    assert largest_image(history) > 3.75 * 1024 * 1024
    repaired = repair_messages(history, policy=RepairPolicy(provider="bedrock")).messages
    assert largest_image(repaired) <= 3.75 * 1024 * 1024
