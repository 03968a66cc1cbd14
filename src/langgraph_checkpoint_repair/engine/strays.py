"""Repair a history in which some results stray from their call's block.

A result answers the nearest preceding unanswered call with its id, real
results before synthetic ones, so a stray can change which result answers
which call, but only among calls and results sharing its id. Every other id
behaves as the walk sees it: its results answer the calls of their own block.
So one survey finds the wrong blocks and the stray ids, the matching runs on
those ids alone, and the output is copied by reference between the few
places that change: the wrong blocks, the blocks calling a stray id, and the
results carrying one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ..codes import ActionKind
from .calls import Call, MessageCalls, read_calls
from .fixes import Fixer
from .kinds import AI, OTHER, TOOL, kind_of
from .synthetic import is_synthetic


class Survey(NamedTuple):
    wrong_blocks: list[int]
    """AIMessages whose block is wrong as the walk sees it: a call unanswered, id-less, reused."""
    stray_ids: set[str]
    """Ids of the results that do not answer a call of their own block."""
    strays: list[tuple[int, str, int | None]]
    """Those results: position, id, and the AIMessage whose run they sit in (if any)."""
    calling: list[tuple[int, Sequence[Any]]]
    """Every AIMessage with tool-call entries, and their ids."""


class Matched(NamedTuple):
    calls: dict[int, MessageCalls]
    """AIMessages calling a stray id -> their calls."""
    answer: dict[tuple[int, int], int]
    """(AI index, call position) of a stray-id call -> the result answering it."""
    in_place: dict[int, bool]
    """Stray-id result -> whether it sits in the block of the call it answers."""
    fate: dict[int, str]
    """Stray-id result answering nothing -> "orphan" or "duplicate"."""


def repair_strays(messages: list[BaseMessage], in_flight: bool, fixer: Fixer) -> list[BaseMessage]:
    """`messages` repaired, whatever the walk met: strays, or data it could not read."""
    survey = survey_history(messages, in_flight)
    matched = match_ids(messages, survey)
    return _emit(messages, survey, matched, fixer)


def survey_history(messages: list[BaseMessage], in_flight: bool) -> Survey:
    """The walk's view of every block, without giving up at a stray."""
    survey = Survey([], set(), [], [])
    wrong, stray_ids, strays, calling = survey
    block, bad, owner = -1, False, None
    waiting: set[str] = _NOTHING  # the ids the open block still waits for
    ai_class, tool_class, human_class = AIMessage, ToolMessage, HumanMessage
    for i, message in enumerate(messages):
        cls = type(message)
        kind = (
            AI
            if cls is ai_class
            else TOOL
            if cls is tool_class
            else OTHER
            if cls is human_class
            else kind_of(message, i)
        )
        if kind == TOOL:
            call_id = message.tool_call_id  # type: ignore[attr-defined]
            if call_id in waiting:
                waiting.remove(call_id)
            else:
                stray_ids.add(call_id)
                strays.append((i, call_id, owner))
            continue
        if waiting or bad:
            wrong.append(block)
            bad = False
        waiting, owner = _NOTHING, None
        if kind == AI and (message.tool_calls or message.invalid_tool_calls):  # type: ignore[attr-defined]
            ids = _entry_ids(message)  # type: ignore[arg-type]
            calling.append((i, ids))
            block, waiting = i, {ids[0]} if len(ids) == 1 and ids[0] else {c for c in ids if c}
            bad = len(waiting) != len(ids)
            owner = i if waiting else None
    if bad or (waiting and not in_flight):
        wrong.append(block)
    return survey


_NOTHING: set[str] = set()
"""What a message without calls leaves waiting (never filled: a result after it strays)."""


def _entry_ids(message: AIMessage) -> list[Any] | tuple[Any, ...]:
    """`call_ids`, cheaper for the usual message with no call or one."""
    calls = message.tool_calls
    if message.invalid_tool_calls or len(calls) > 1:
        return call_ids(message)
    return (calls[0].get("id"),) if calls else ()


def call_ids(message: AIMessage) -> list[Any]:
    """The ids of every tool-call entry of `message`, None for an id-less one."""
    ids = [c.get("id") for c in message.tool_calls]
    if message.invalid_tool_calls:
        ids += [c.get("id") for c in message.invalid_tool_calls]
    return ids


def match_ids(messages: list[BaseMessage], survey: Survey) -> Matched:
    """The ordered matching, real results first, for the calls and results of stray ids.

    Those results are the strays and the results in the runs of the AIMessages
    calling a stray id; no other result carries one."""
    ids = survey.stray_ids
    matched = Matched({}, {}, {}, {})
    calls_in_order: list[tuple[int, int, Call]] = []
    results = {index: (call_id, owner) for index, call_id, owner in survey.strays}
    for ai_index, entry_ids in survey.calling:
        if ids.isdisjoint(entry_ids):
            continue
        calls = read_calls(messages[ai_index])  # type: ignore[arg-type]
        matched.calls[ai_index] = calls
        calls_in_order.extend((ai_index, k, c) for k, c in enumerate(calls.calls) if c.id in ids)
        for index in range(ai_index + 1, _run_end(messages, ai_index)):
            call_id = messages[index].tool_call_id  # type: ignore[attr-defined]
            if call_id in ids:
                results.setdefault(index, (call_id, ai_index))
    ordered = [(i, c, o, is_synthetic(messages[i])) for i, (c, o) in sorted(results.items())]
    for synthetic in (False, True):
        _match_pass(calls_in_order, [r for r in ordered if r[3] is synthetic], matched)
    return matched


def _match_pass(
    calls: list[tuple[int, int, Call]],
    results: list[tuple[int, str, int | None, bool]],
    matched: Matched,
) -> None:
    """One pass of the ordered matching: each result takes the nearest open call before it."""
    open_by_id: dict[str, list[tuple[int, int]]] = {}
    seen: set[str] = set()
    next_call = 0
    for index, call_id, owner, _ in results:
        while next_call < len(calls) and calls[next_call][0] < index:
            ai_index, k, call = calls[next_call]
            seen.add(call.id)
            if (ai_index, k) not in matched.answer:
                open_by_id.setdefault(call.id, []).append((ai_index, k))
            next_call += 1
        stack = open_by_id.get(call_id)
        if stack:
            ref = stack.pop()
            matched.answer[ref] = index
            matched.in_place[index] = owner == ref[0]
        else:
            matched.fate[index] = "duplicate" if call_id in seen else "orphan"


class _Touch(NamedTuple):
    """A place where the output departs from the input."""

    position: int
    order: int  # a block closes before the message that closes it
    what: str


def _touches(messages: list[BaseMessage], survey: Survey, matched: Matched) -> Iterator[_Touch]:
    """Where the output differs from the input, in output order."""
    blocks = set(survey.wrong_blocks) | set(matched.calls)
    touches = [_Touch(i, 1, "result") for i in (*matched.in_place, *matched.fate)]
    for ai_index in blocks:
        touches.append(_Touch(ai_index, 1, "call"))
        touches.append(_Touch(_run_end(messages, ai_index), 0, "close"))
    return iter(sorted(touches))


def _run_end(messages: list[BaseMessage], ai_index: int) -> int:
    end = ai_index + 1
    while end < len(messages) and kind_of(messages[end], end) == TOOL:
        end += 1
    return end


def _emit(
    messages: list[BaseMessage], survey: Survey, matched: Matched, fixer: Fixer
) -> list[BaseMessage]:
    """Copy slices of the input between touches, applying the rules at each."""
    out: list[BaseMessage] = []
    copied = 0
    open_blocks: dict[int, list[tuple[Call, int | None, bool]]] = {}
    closing: dict[int, int] = {}
    stray_ids = survey.stray_ids
    for touch in _touches(messages, survey, matched):
        out += messages[copied : touch.position]
        copied = touch.position
        if touch.what == "close":
            ai_index = closing.pop(touch.position)
            _close(messages, ai_index, open_blocks.pop(ai_index), fixer, out)
        elif touch.what == "call":
            end = _run_end(messages, touch.position)
            closing[end] = touch.position
            open_blocks[touch.position] = _answers(
                messages, touch.position, end, matched, stray_ids
            )
            _emit_call_message(messages, touch.position, open_blocks[touch.position], fixer, out)
            copied = touch.position + 1
        else:
            _emit_result(messages, touch.position, matched, fixer, out)
            copied = touch.position + 1
    out += messages[copied:]
    return out


def _answers(
    messages: list[BaseMessage], ai_index: int, end: int, matched: Matched, stray_ids: set[str]
) -> list[tuple[Call, int | None, bool]]:
    """Each call of the block with the result answering it (None: unanswered) and
    whether that result is in place. A call whose id no result strays with is
    answered in place exactly when its block's run holds a result with its id."""
    message = messages[ai_index]
    assert isinstance(message, AIMessage)
    calls = matched.calls.get(ai_index) or read_calls(message)
    local = {m.tool_call_id for m in messages[ai_index + 1 : end]}  # type: ignore[attr-defined]
    answers: list[tuple[Call, int | None, bool]] = []
    for k, call in enumerate(calls.calls):
        if call.id in stray_ids:
            answer = matched.answer.get((ai_index, k))
            answers.append((call, answer, answer is not None and matched.in_place[answer]))
        else:
            answers.append((call, ai_index if call.id in local else None, True))
    return answers


def _emit_call_message(
    messages: list[BaseMessage],
    ai_index: int,
    answers: list[tuple[Call, int | None, bool]],
    fixer: Fixer,
    out: list[BaseMessage],
) -> None:
    message = messages[ai_index]
    assert isinstance(message, AIMessage)
    calls = read_calls(message)
    unanswered = [call for call, answer, _ in answers if answer is None]
    out.append(fixer.fix_call_message(ai_index, message, calls, unanswered))


def _emit_result(
    messages: list[BaseMessage], index: int, matched: Matched, fixer: Fixer, out: list[BaseMessage]
) -> None:
    """Keep a result in place, leave a moved one for its call's block, or apply the policy."""
    in_place = matched.in_place.get(index)
    if in_place is not None:
        if in_place:
            out.append(messages[index])
        return
    fate = matched.fate[index]
    policy = fixer.policy
    if (policy.orphans if fate == "orphan" else policy.duplicates) == "keep":
        out.append(messages[index])
        return
    message: Any = messages[index]
    kind: ActionKind = "orphan_dropped" if fate == "orphan" else "duplicate_dropped"
    fixer.act(kind, message.tool_call_id, message.name, index)


def _close(
    messages: list[BaseMessage],
    ai_index: int,
    answers: list[tuple[Call, int | None, bool]],
    fixer: Fixer,
    out: list[BaseMessage],
) -> None:
    """After the results in place: moved results, then synthetic ones, in call order."""
    for call, answer, in_place in answers:
        if answer is None:
            fixer.answer(call, ai_index, out)
        elif not in_place:
            out.append(messages[answer])
            fixer.act("moved", call.id, call.name, answer)
