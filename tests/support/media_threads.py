"""Real threads bricked by content: a browser tool that returned a screenshot over
Anthropic's 5 MB limit (as MCP tools return images), the prebuilt agent that calls it,
and the thread every later run fails on."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import create_react_agent

from langgraph_checkpoint_repair import RepairPolicy
from tests.support.agents import thread
from tests.support.claude_model import AnthropicBadRequest
from tests.support.fakes import CheckingModel
from tests.support.media import ANTHROPIC_LIMIT, MB, b64, png_bytes
from tests.support.media_model import media_claude
from tests.support.stores import Store

ANTHROPIC = RepairPolicy(provider="anthropic")
TOO_BIG = (
    r"messages\.2\.content\.0\.content\.1\.image\.source\.base64: "
    r"image exceeds 5 MB maximum: \d+ bytes > 5242880 bytes"
)
URL = "https://example.com"
CALL_ID = "toolu_01"


@dataclass(frozen=True)
class Payload:
    """A real PNG and its base64 text, as a tool returned it."""

    png: bytes
    data: str

    @property
    def slice(self) -> str:
        """200 characters from the middle of the base64: found only where a copy is."""
        middle = len(self.data) // 2
        return self.data[middle : middle + 200]

    @property
    def placeholder(self) -> str:
        """The text block that takes the image's place for Claude."""
        return (
            f"[image removed: image/png, {len(self.png) / MB:.1f} MB; over the anthropic "
            f"limit of 5.0 MB, {len(self.data) / MB:.1f} MB as base64]"
        )


@pytest.fixture(scope="module")
def big() -> Payload:
    """A 1200x1200 noise PNG: about 4.1 MB, 5.5 MB as base64 (over Anthropic's 5 MB)."""
    png = png_bytes(1200, 1200, noise=True)
    payload = Payload(png, b64(png))
    assert len(payload.data) > ANTHROPIC_LIMIT
    return payload


@pytest.fixture(scope="module")
def small() -> Payload:
    png = png_bytes(64, 48, noise=True)
    assert 1024 < len(png) < 1024 * 1024
    return Payload(png, b64(png))


def screenshot_tool(payload: Payload) -> BaseTool:
    """A browser tool, as MCP tools return images: the picture in the content and its
    bytes again in the artifact."""

    @tool(response_format="content_and_artifact")
    def screenshot(url: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Take a screenshot of a web page."""
        image = {"type": "image", "base64": payload.data, "mime_type": "image/png"}
        return [{"type": "text", "text": f"Screenshot of {url}"}, image], {
            "png_base64": payload.data,
            "url": url,
        }

    return screenshot


SHOT = AIMessage(
    "",
    id="ai-shot",
    tool_calls=[{"name": "screenshot", "args": {"url": URL}, "id": CALL_ID}],
)


def agent(model: CheckingModel, saver: Any, tools: Sequence[BaseTool]) -> CompiledStateGraph[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(model, list(tools), checkpointer=saver)


async def brick(store: Store, payload: Payload) -> Any:
    """The agent takes a screenshot; Claude refuses the next call, and the one after."""
    config = thread()
    tools = [screenshot_tool(payload)]
    first = agent(media_claude(SHOT, "unused"), store.saver, tools)
    ask = {"messages": [HumanMessage(f"What is on {URL}?", id="h1")]}
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(first, ask, config)
    again = {"messages": [HumanMessage("Hello?", id="h2")]}
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(agent(media_claude("unused"), store.saver, tools), again, config)
    return config
