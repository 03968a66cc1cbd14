"""Ordered matching of tool results to tool calls: one pass, no rescans.

A ToolMessage answers the nearest preceding unanswered call with its
`tool_call_id`, so models that reuse `call_0` every turn are matched turn by
turn. Real results are matched first and synthetic ones (made by this library)
fill only what is left, so a real result always wins over a synthetic one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .synthetic import is_synthetic

Fate = Literal["orphan", "duplicate"]


@dataclass
class Call:
    """One tool call of an AIMessage and, once matched, the result that answers it."""

    ai_index: int
    id: str
    name: str
    args: Any
    invalid: bool
    position: int
    """Position in the AIMessage's `tool_calls` (or `invalid_tool_calls`) list."""
    answer: int | None = None
    in_place: bool = False
    """True when the answer already sits in the run of results right after the call."""


@dataclass
class HistoryIndex:
    """Everything the emitter needs, computed in at most two linear passes."""

    calls_by_ai: dict[int, list[Call]] = field(default_factory=dict)
    unnamed_calls: dict[int, list[str]] = field(default_factory=dict)
    """AI index -> names of its calls that have no id (unrepairable)."""
    answer_of: dict[int, Call] = field(default_factory=dict)
    """ToolMessage index -> the call it answers."""
    fate: dict[int, Fate] = field(default_factory=dict)
    """ToolMessage index -> why it answers nothing."""


def index_history(messages: Sequence[BaseMessage]) -> HistoryIndex:
    """Collect the calls and match every result to its call, or mark it orphan/duplicate."""
    index = HistoryIndex()
    synthetic: set[int] = set()
    for i, message in enumerate(messages):
        if isinstance(message, AIMessage):
            _collect_calls(i, message, index)
        elif isinstance(message, ToolMessage):
            if is_synthetic(message):
                synthetic.add(i)
        elif not isinstance(message, BaseMessage):
            raise TypeError(f"item {i} is a {type(message).__name__}, not a message")
    _match_results(messages, index, lambda i: i not in synthetic)
    if synthetic:
        _match_results(messages, index, synthetic.__contains__)
    return index


def _collect_calls(i: int, message: AIMessage, index: HistoryIndex) -> None:
    calls: list[Call] = []
    for invalid, entries in ((False, message.tool_calls), (True, message.invalid_tool_calls)):
        for position, entry in enumerate(entries or ()):
            call_id, name = entry.get("id"), entry.get("name") or ""
            if not call_id:
                index.unnamed_calls.setdefault(i, []).append(name)
                continue
            args = entry.get("args")
            calls.append(Call(i, call_id, name, args, invalid, position))
    if calls:
        index.calls_by_ai[i] = calls


def _match_results(messages: Sequence[BaseMessage], index: HistoryIndex, takes_part: Any) -> None:
    """Match the ToolMessages for which `takes_part(i)` holds against unanswered calls."""
    open_by_id: dict[str, list[Call]] = {}
    seen_ids: set[str] = set()
    run_owner: int | None = None
    for i, message in enumerate(messages):
        calls = index.calls_by_ai.get(i)
        if calls is not None:
            run_owner = i
            for call in calls:
                seen_ids.add(call.id)
                if call.answer is None:
                    open_by_id.setdefault(call.id, []).append(call)
        elif not isinstance(message, ToolMessage):
            run_owner = None
        elif takes_part(i):
            stack = open_by_id.get(message.tool_call_id)
            if stack:
                call = stack.pop()
                call.answer, call.in_place = i, run_owner == call.ai_index
                index.answer_of[i] = call
            else:
                index.fate[i] = "duplicate" if message.tool_call_id in seen_ids else "orphan"
