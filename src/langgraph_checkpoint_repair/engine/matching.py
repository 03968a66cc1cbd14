"""Ordered matching of every result to a call, for histories where results stray.

A ToolMessage answers the nearest preceding unanswered call with its
`tool_call_id`, so models that reuse `call_0` every turn are matched turn by
turn. Real results are matched first and synthetic ones (made by this library)
fill only what is left, so a real result always wins over a synthetic one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage

from .calls import MessageCalls, read_calls
from .kinds import AI, TOOL, kind_of
from .synthetic import is_synthetic

Fate = Literal["orphan", "duplicate"]
CallRef = tuple[int, int]
"""(AIMessage index, position in its answerable calls)."""


@dataclass
class Matching:
    calls_by_ai: dict[int, MessageCalls] = field(default_factory=dict)
    """AIMessages with any tool-call entry -> their calls and notes."""
    answers: dict[int, list[int | None]] = field(default_factory=dict)
    """AI index -> the result index answering each of its calls, or None."""
    in_place: dict[int, bool] = field(default_factory=dict)
    """Result index -> whether it already sits in the block of the call it answers."""
    fate: dict[int, Fate] = field(default_factory=dict)
    """Result index -> why it answers nothing."""


def match_history(messages: list[BaseMessage]) -> Matching:
    """Collect the calls and match every result, real ones first."""
    matching = Matching()
    synthetic: set[int] = set()
    for i, message in enumerate(messages):
        kind = kind_of(message, i)
        if kind == AI:
            assert isinstance(message, AIMessage)
            calls = read_calls(message)
            if calls.calls or calls.notes:
                matching.calls_by_ai[i] = calls
                matching.answers[i] = [None] * len(calls.calls)
        elif kind == TOOL and is_synthetic(message):
            synthetic.add(i)
    _match_results(messages, matching, lambda i: i not in synthetic)
    if synthetic:
        _match_results(messages, matching, synthetic.__contains__)
    return matching


def _match_results(
    messages: list[BaseMessage], matching: Matching, takes_part: Callable[[int], bool]
) -> None:
    """Match the results for which `takes_part(i)` holds against unanswered calls."""
    open_by_id: dict[str, list[CallRef]] = {}
    seen_ids: set[str] = set()
    run_owner: int | None = None
    for i, message in enumerate(messages):
        kind = kind_of(message, i)
        calls = matching.calls_by_ai.get(i) if kind == AI else None
        if calls is not None and calls.calls:
            run_owner = i
            answers = matching.answers[i]
            for k, call in enumerate(calls.calls):
                seen_ids.add(call.id)
                if answers[k] is None:
                    open_by_id.setdefault(call.id, []).append((i, k))
        elif kind != TOOL:
            run_owner = None
        elif takes_part(i):
            call_id = message.tool_call_id  # type: ignore[attr-defined]
            stack = open_by_id.get(call_id)
            if stack:
                ai_index, k = stack.pop()
                matching.answers[ai_index][k] = i
                matching.in_place[i] = run_owner == ai_index
            else:
                matching.fate[i] = "duplicate" if call_id in seen_ids else "orphan"
