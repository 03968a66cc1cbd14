"""The cheap walk: prove a history valid, rebuilding only the blocks that are wrong.

A block is an AIMessage with tool calls and the run of ToolMessages right
after it. The walk looks at each message's class once and keeps only the ids
its open block still waits for (one id, or a set for parallel calls), so a
valid history costs no allocation beyond those sets, and results answered in
any order cost the same. A block found wrong (a call unanswered, without an
id, or with an id used twice) is rebuilt when it closes; everything between
wrong blocks is copied by reference, a slice at a time.

A result outside the block of the call it answers (a stray) may answer a call
anywhere earlier, so the walk gives up and `strays` decides.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair.engine.calls import read_calls
from langgraph_checkpoint_repair.engine.kinds import AI, KIND_BY_CLASS, TOOL, NotAMessage, kind_of

from .fixes import Fixer

_id_of = itemgetter("id")


def walk(messages: list[BaseMessage], in_flight: bool, fixer: Fixer) -> list[BaseMessage] | None:
    """`messages` itself when valid, a repaired copy, or None when a result strays
    (then `fixer` holds partial work and is to be dropped).

    With `in_flight`, the last block may still wait for results: its calls may run.
    """
    try:
        return _walk(messages, in_flight, fixer)
    except NotAMessage:
        raise
    except _RuleFailed as failed:  # e.g. a placeholder callable: not to be called twice
        raise failed.error from None
    except (AttributeError, KeyError, TypeError, ValueError):  # odd data: `strays` judges
        return None


class _RuleFailed(Exception):
    """Carries an error raised by a rule out of the walk, past its odd-data net."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _walk(messages: list[BaseMessage], in_flight: bool, fixer: Fixer) -> list[BaseMessage] | None:
    kinds, tool_class, ai_class, human_class = KIND_BY_CLASS, ToolMessage, AIMessage, HumanMessage
    out: list[BaseMessage] | None = None  # made at the first wrong block
    copied = 0  # messages[:copied] are in `out`
    block = -1
    waiting: Any = None  # None, the one id still unanswered, or a set of them
    wrong = False  # the open block has a call without an id or an id used twice
    lone_fix = fixer.lone_call_fix()
    for i, message in enumerate(messages):
        cls = type(message)  # identity tests first: the three common classes
        if cls is tool_class:
            kind = TOOL
        elif cls is ai_class:
            kind = AI
        elif cls is human_class:
            kind = 0
        else:
            kind = kinds.get(cls, -1)
            if kind < 0:
                kind = kind_of(message, i)
        if kind == TOOL:
            if waiting is None:
                return None
            if type(waiting) is str:
                if message.tool_call_id != waiting:  # type: ignore[attr-defined]
                    return None
                waiting = None
            else:
                try:
                    waiting.remove(message.tool_call_id)  # type: ignore[attr-defined]
                except KeyError:
                    return None
                if not waiting:
                    waiting = None
            continue
        if waiting is not None or wrong:
            if out is None:
                out = []
            if lone_fix is not None and type(waiting) is str and not wrong:
                out += messages[copied:i]  # the usual case: one call, no result
                try:
                    lone_fix(messages[block], block, out)  # type: ignore[arg-type]
                except Exception as error:
                    raise _RuleFailed(error) from error
            else:
                out += messages[copied:block]
                _apply(_rebuild, messages, block, i, fixer, out)
            copied, waiting, wrong = i, None, False
        if kind == AI:
            calls = message.tool_calls  # type: ignore[attr-defined]
            if message.invalid_tool_calls or len(calls) > 1:  # type: ignore[attr-defined]
                block = i
                waiting, sound = _waiting_ids(message)  # type: ignore[arg-type]
                wrong = not sound
            elif calls:
                block = i
                waiting = calls[0]["id"]
                if not waiting:
                    waiting, wrong = None, True
    if wrong or (waiting is not None and not in_flight):
        if out is None:
            out = []
        out += messages[copied:block]
        _apply(_rebuild, messages, block, len(messages), fixer, out)
        copied = len(messages)
    if out is None:
        return messages
    out += messages[copied:]
    return out


def _apply(rule: Callable[..., None], *args: Any) -> None:
    """Run a rule; what it raises is its own error, not odd data for the walk."""
    try:
        rule(*args)
    except Exception as error:
        raise _RuleFailed(error) from error


def _waiting_ids(message: AIMessage) -> tuple[set[str] | None, bool]:
    """The ids a block of parallel calls waits for, and False if one is missing or reused."""
    ids = set(map(_id_of, message.tool_calls))
    count = len(message.tool_calls)
    if message.invalid_tool_calls:
        ids.update(map(_id_of, message.invalid_tool_calls))
        count += len(message.invalid_tool_calls)
    sound = len(ids) == count and None not in ids and "" not in ids
    ids.discard(None)
    ids.discard("")
    return ids or None, sound


def _rebuild(
    messages: list[BaseMessage], ai_index: int, end: int, fixer: Fixer, out: list[BaseMessage]
) -> None:
    """Append the block of `ai_index` (its results end at `end`), repaired.

    Every result in it answers a distinct call of the AIMessage (none strays),
    so what is left is local: notes, dropped calls, and synthetic results for
    the calls still unanswered, in call order.
    """
    message = messages[ai_index]
    assert isinstance(message, AIMessage)
    calls = read_calls(message)
    unanswered = calls.calls
    if end > ai_index + 1:
        answered = {m.tool_call_id for m in messages[ai_index + 1 : end]}  # type: ignore[attr-defined]
        unanswered = [c for c in calls.calls if c.id not in answered]
    out.append(fixer.fix_call_message(ai_index, message, calls, unanswered))
    out += messages[ai_index + 1 : end]
    for call in unanswered:
        fixer.answer(call, ai_index, out)
