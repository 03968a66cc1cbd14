"""Small builders for named test histories, and what a history holds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage


def human(text: str, id: str | None = None) -> HumanMessage:
    return HumanMessage(text, id=id or f"h-{text}")


def ai(id: str, *call_ids: str, invalid: tuple[str, ...] = (), text: str = "") -> AIMessage:
    """An AIMessage calling tool `t_<call id>` once per id."""
    calls: list[Any] = [{"name": f"t_{c}", "args": {"q": c}, "id": c} for c in call_ids]
    bad: list[Any] = [
        {"name": f"t_{c}", "args": "{not json", "id": c, "error": "bad json"} for c in invalid
    ]
    return AIMessage(text, id=id, tool_calls=calls, invalid_tool_calls=bad)


def tool(call_id: str, text: str | None = None, id: str | None = None) -> ToolMessage:
    return ToolMessage(text or f"result {call_id}", tool_call_id=call_id, id=id or f"r-{call_id}")


def results(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def holds(messages: Sequence[BaseMessage], text: str) -> bool:
    """Whether any field of any message holds `text`."""
    return any(text in json.dumps(m.model_dump(), default=str) for m in messages)
