"""Rebuild only the broken blocks when every result sits in its call's block.

Everything between broken blocks is copied by reference, a slice at a time.
Inside a broken block each result already answers a distinct call of its
AIMessage (no result strays), so what is left to do is local: notes, dropped
calls, and synthetic results for the calls still unanswered, in call order.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage

from .calls import read_calls
from .fixes import Fixer
from .scan import TOOL, kind_of


def rebuild_blocks(
    messages: list[BaseMessage], broken: list[int], fixer: Fixer
) -> list[BaseMessage]:
    """`messages` with the blocks of the AIMessages at `broken` repaired."""
    out: list[BaseMessage] = []
    start = 0
    for ai_index in broken:
        out += messages[start:ai_index]
        start = _run_end(messages, ai_index)
        _rebuild_block(messages, ai_index, start, fixer, out)
    out += messages[start:]
    return out


def _run_end(messages: list[BaseMessage], ai_index: int) -> int:
    """Index of the first message after the run of results following `ai_index`."""
    end = ai_index + 1
    while end < len(messages) and kind_of(messages[end], end) == TOOL:
        end += 1
    return end


def _rebuild_block(
    messages: list[BaseMessage], ai_index: int, end: int, fixer: Fixer, out: list[BaseMessage]
) -> None:
    message = messages[ai_index]
    assert isinstance(message, AIMessage)
    calls = read_calls(message)
    answered = {m.tool_call_id for m in messages[ai_index + 1 : end]}  # type: ignore[attr-defined]
    unanswered = [c for c in calls.calls if c.id not in answered]
    out.append(fixer.fix_call_message(ai_index, message, calls, unanswered))
    out += messages[ai_index + 1 : end]
    for call in unanswered:
        fixer.answer(call, ai_index, out)
