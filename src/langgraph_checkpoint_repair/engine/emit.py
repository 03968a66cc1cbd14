"""Emit a repaired history message by message from a full matching."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage

from .actions import ActionKind
from .fixes import Fixer
from .kinds import TOOL, kind_of
from .matching import Matching


def emit_history(
    messages: list[BaseMessage], matching: Matching, fixer: Fixer
) -> list[BaseMessage]:
    """Results in place stay; moved ones join their call's block; strays go by policy."""
    out: list[BaseMessage] = []
    open_block: int | None = None
    for i, message in enumerate(messages):
        if kind_of(message, i) == TOOL:
            _emit_result(i, message, matching, fixer, out)
            continue
        if open_block is not None:
            _close_block(messages, open_block, matching, fixer, out)
        open_block = _emit_message(i, message, matching, fixer, out)
    if open_block is not None:
        _close_block(messages, open_block, matching, fixer, out)
    return out


def _emit_message(
    i: int, message: BaseMessage, matching: Matching, fixer: Fixer, out: list[BaseMessage]
) -> int | None:
    """Emit a non-tool message; return its index when results must follow it."""
    calls = matching.calls_by_ai.get(i)
    if calls is None:
        out.append(message)
        return None
    assert isinstance(message, AIMessage)
    answers = matching.answers[i]
    unanswered = [c for c, answer in zip(calls.calls, answers, strict=True) if answer is None]
    out.append(fixer.fix_call_message(i, message, calls, unanswered))
    return i if calls.calls else None


def _emit_result(
    i: int, message: BaseMessage, matching: Matching, fixer: Fixer, out: list[BaseMessage]
) -> None:
    """Keep a result where it stands, or leave it for its call's block, or drop it."""
    in_place = matching.in_place.get(i)
    if in_place is not None:
        if in_place:
            out.append(message)
        return
    fate = matching.fate[i]
    setting = fixer.policy.orphans if fate == "orphan" else fixer.policy.duplicates
    if setting == "keep":
        out.append(message)
    else:
        kind: ActionKind = "orphan_dropped" if fate == "orphan" else "duplicate_dropped"
        fixer.act(kind, message.tool_call_id, message.name, i)  # type: ignore[attr-defined]


def _close_block(
    messages: list[BaseMessage],
    ai_index: int,
    matching: Matching,
    fixer: Fixer,
    out: list[BaseMessage],
) -> None:
    """After the results in place: moved results, then synthetic ones, in call order."""
    calls = matching.calls_by_ai[ai_index].calls
    for call, answer in zip(calls, matching.answers[ai_index], strict=True):
        if answer is None:
            fixer.answer(call, ai_index, out)
        elif not matching.in_place[answer]:
            out.append(messages[answer])
            fixer.act("moved", call.id, call.name, answer)
