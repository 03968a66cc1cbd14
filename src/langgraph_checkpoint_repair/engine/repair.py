"""`repair_messages`: make a history satisfy the provider tool-call pairing rules.

The walk is ordered and linear: a fast check proves most histories clean
without allocating; otherwise one indexing pass (`matching`) and one emitting
pass rebuild the list, one small function per rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .actions import HistoryError, RepairAction, RepairResult
from .hygiene import repair_for_provider
from .matching import Call, HistoryIndex, index_history
from .policy import DEFAULT_POLICY, PendingCall, RepairPolicy
from .synthetic import make_placeholder


def repair_messages(
    messages: Sequence[BaseMessage],
    *,
    policy: RepairPolicy | None = None,
    in_flight: bool = False,
) -> RepairResult:
    """Return `messages` with every tool call answered once, in place.

    `in_flight=True` says the unanswered calls of the last AIMessage (when only
    tool results follow it) may still run, so they are left alone. A history
    that needs nothing comes back as the same list with `changed=False`.
    """
    policy = policy or DEFAULT_POLICY
    if policy.provider is not None:  # pairing first, then that provider's own rules
        return repair_for_provider(messages, policy, in_flight, repair_messages)
    as_list = messages if isinstance(messages, list) else list(messages)
    if _is_clean(as_list, in_flight):
        return RepairResult(as_list, (), False)
    index = index_history(as_list)
    emitter = _Emitter(as_list, index, policy, _in_flight_ai(as_list, in_flight))
    repaired = emitter.run()
    changing = [a for a in emitter.actions if a.kind != "unrepairable"]
    if policy.strict and emitter.actions:
        raise HistoryError(emitter.actions)
    if not changing:
        return RepairResult(as_list, tuple(emitter.actions), False)
    return RepairResult(repaired, tuple(emitter.actions), True)


def _is_clean(messages: list[BaseMessage], in_flight: bool) -> bool:
    """True when every call is answered exactly once in the run right after it.

    This is the hot path for loads of healthy threads: one look at each
    message's class, no allocation beyond the ids a turn is waiting for.
    """
    expected: list[Any] = []
    kinds = _KIND_BY_CLASS
    try:
        for message in messages:
            kind = kinds.get(type(message)) or _learn_kind(type(message))
            if kind == "tool":
                expected.remove(message.tool_call_id)  # type: ignore[attr-defined]
                continue
            if expected:
                return False
            if kind == "ai":
                calls = message.tool_calls  # type: ignore[attr-defined]
                invalid = message.invalid_tool_calls  # type: ignore[attr-defined]
                if calls or invalid:
                    expected = [c.get("id") for c in calls]
                    if invalid:
                        expected.extend(c.get("id") for c in invalid)
                    if not all(expected):
                        return False
    except (AttributeError, TypeError, ValueError):  # odd data: let the full walk judge
        return False
    return not expected or in_flight


_KIND_BY_CLASS: dict[type, str] = {}


def _learn_kind(cls: type) -> str:
    """Classify a message class once: "tool", "ai" or "other"."""
    if not issubclass(cls, BaseMessage):
        raise TypeError(f"{cls.__name__} is not a message")
    kind = "other"
    if issubclass(cls, ToolMessage):
        kind = "tool"
    elif issubclass(cls, AIMessage):
        kind = "ai"
    _KIND_BY_CLASS[cls] = kind
    return kind


def _in_flight_ai(messages: list[BaseMessage], in_flight: bool) -> int | None:
    """Index of the last AIMessage when only tool results follow it and it may still run."""
    if not in_flight:
        return None
    i = len(messages) - 1
    while i >= 0 and isinstance(messages[i], ToolMessage):
        i -= 1
    return i if i >= 0 and isinstance(messages[i], AIMessage) else None


class _Emitter:
    """Builds the repaired list in one ordered walk over the input."""

    def __init__(
        self,
        messages: list[BaseMessage],
        index: HistoryIndex,
        policy: RepairPolicy,
        in_flight_ai: int | None,
    ) -> None:
        self.messages = messages
        self.index = index
        self.policy = policy
        self.in_flight_ai = in_flight_ai
        self.out: list[BaseMessage] = []
        self.actions: list[RepairAction] = []

    def run(self) -> list[BaseMessage]:
        open_block: int | None = None
        for i, message in enumerate(self.messages):
            if isinstance(message, ToolMessage):
                self._emit_result(i, message)
                continue
            if open_block is not None:
                self._close_block(open_block)
            open_block = self._emit_message(i, message)
        if open_block is not None:
            self._close_block(open_block)
        return self.out

    def _emit_message(self, i: int, message: BaseMessage) -> int | None:
        """Emit a non-tool message; return its index when results must follow it."""
        for name in self.index.unnamed_calls.get(i, ()):
            self._act("unrepairable", None, name, i)
        calls = self.index.calls_by_ai.get(i)
        if calls is None:
            self.out.append(message)
            return None
        dropped = [c for c in calls if self._drops_call(c)]
        self.out.append(_without_calls(message, dropped) if dropped else message)
        for call in dropped:
            self._act("call_dropped", call.id, call.name, i)
        return i

    def _emit_result(self, i: int, message: ToolMessage) -> None:
        """Keep a result where it stands, or leave it for its call's block, or drop it."""
        call = self.index.answer_of.get(i)
        if call is not None:
            if call.in_place:
                self.out.append(message)
            return
        fate = self.index.fate[i]
        setting = self.policy.orphans if fate == "orphan" else self.policy.duplicates
        if setting == "keep":
            self.out.append(message)
        else:
            self._act(f"{fate}_dropped", message.tool_call_id, message.name, i)

    def _close_block(self, ai_index: int) -> None:
        """After the results already in place: moved results, then placeholders, in call order."""
        for call in self.index.calls_by_ai[ai_index]:
            if call.answer is not None:
                if not call.in_place:
                    self.out.append(self.messages[call.answer])
                    self._act("moved", call.id, call.name, call.answer)
            elif self._needs_placeholder(call):
                self.out.append(make_placeholder(self._pending(call), self.policy))
                self._act("placeholder", call.id, call.name, ai_index)

    def _needs_placeholder(self, call: Call) -> bool:
        return call.ai_index != self.in_flight_ai and self.policy.dangling == "placeholder"

    def _drops_call(self, call: Call) -> bool:
        return (
            call.answer is None
            and call.ai_index != self.in_flight_ai
            and self.policy.dangling == "drop_call"
        )

    def _pending(self, call: Call) -> PendingCall:
        ai = self.messages[call.ai_index]
        assert isinstance(ai, AIMessage)
        return PendingCall(
            call.id, call.name, call.args, call.invalid, ai, call.ai_index, self.messages
        )

    def _act(self, kind: Any, call_id: str | None, name: str | None, index: int) -> None:
        self.actions.append(RepairAction(kind, call_id, name, index))


def _without_calls(message: BaseMessage, dropped: list[Call]) -> BaseMessage:
    """A copy of `message` without the dropped calls, wherever the provider may read them."""
    assert isinstance(message, AIMessage)
    valid = {c.position for c in dropped if not c.invalid}
    invalid = {c.position for c in dropped if c.invalid}
    tool_calls = [c for n, c in enumerate(message.tool_calls) if n not in valid]
    invalid_calls = [c for n, c in enumerate(message.invalid_tool_calls) if n not in invalid]
    kept_ids = {c.get("id") for c in tool_calls} | {c.get("id") for c in invalid_calls}
    gone = {c.id for c in dropped} - kept_ids
    update: dict[str, Any] = {"tool_calls": tool_calls, "invalid_tool_calls": invalid_calls}
    if isinstance(message.content, list):
        update["content"] = [b for b in message.content if not _is_call_block(b, gone)]
    raw_calls = message.additional_kwargs.get("tool_calls")
    if isinstance(raw_calls, list):
        kept_raw = [c for c in raw_calls if not (isinstance(c, dict) and c.get("id") in gone)]
        update["additional_kwargs"] = {**message.additional_kwargs, "tool_calls": kept_raw}
    return message.model_copy(update=update)


def _is_call_block(block: object, ids: set[str]) -> bool:
    return isinstance(block, dict) and block.get("id") in ids and "tool" in str(block.get("type"))
