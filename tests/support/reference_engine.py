"""The reference engine: the first, straightforward implementation of the rules.

It indexes every call and matches every result in two full passes (real
results first, then synthetic ones) and emits message by message. It is slow
but plain, and the property tests hold the fast engine to exactly its output.
It shares with the engine only the rule helpers that rewrite one message
(`without_calls`) and name one synthetic result (`placeholder_id`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_checkpoint_repair.engine import (
    MARKER_KEY,
    HistoryError,
    PendingCall,
    RepairAction,
    RepairPolicy,
    RepairResult,
    is_synthetic,
)
from langgraph_checkpoint_repair.engine.calls import Call as RemovedCall
from langgraph_checkpoint_repair.engine.synthetic import placeholder_id
from langgraph_checkpoint_repair.engine.traces import without_calls

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
    answer: int | None = None
    in_place: bool = False


@dataclass
class HistoryIndex:
    calls_by_ai: dict[int, list[Call]] = field(default_factory=dict)
    notes: dict[int, list[tuple[str, str | None, str]]] = field(default_factory=dict)
    """AI index -> (kind, call id, name) of its id-less and duplicate calls, in entry order."""
    duplicate_calls: dict[int, list[Call]] = field(default_factory=dict)
    answer_of: dict[int, Call] = field(default_factory=dict)
    fate: dict[int, Fate] = field(default_factory=dict)


def reference_repair(
    messages: Sequence[BaseMessage],
    *,
    policy: RepairPolicy | None = None,
    in_flight: bool = False,
) -> RepairResult:
    policy = policy or RepairPolicy()
    as_list = messages if isinstance(messages, list) else list(messages)
    index = index_history(as_list)
    emitter = _Emitter(as_list, index, policy, _in_flight_ai(as_list, in_flight))
    repaired = emitter.run()
    changing = [a for a in emitter.actions if a.kind != "unrepairable"]
    if policy.strict and emitter.actions:
        raise HistoryError(emitter.actions)
    if not changing:
        return RepairResult(as_list, tuple(emitter.actions), False)
    return RepairResult(repaired, tuple(emitter.actions), True)


def index_history(messages: Sequence[BaseMessage]) -> HistoryIndex:
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
    seen: set[str] = set()
    for invalid, entries in ((False, message.tool_calls), (True, message.invalid_tool_calls)):
        for position, entry in enumerate(entries or ()):
            call_id, name = entry.get("id"), entry.get("name") or ""
            if not call_id:
                index.notes.setdefault(i, []).append(("unrepairable", None, name))
                continue
            call = Call(i, call_id, name, entry.get("args"), invalid, position)
            if call_id in seen:
                index.notes.setdefault(i, []).append(("duplicate_call_dropped", call_id, name))
                index.duplicate_calls.setdefault(i, []).append(call)
                continue
            seen.add(call_id)
            calls.append(call)
    if calls:
        index.calls_by_ai[i] = calls


def _match_results(
    messages: Sequence[BaseMessage], index: HistoryIndex, takes_part: Callable[[int], bool]
) -> None:
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


def _in_flight_ai(messages: list[BaseMessage], in_flight: bool) -> int | None:
    if not in_flight:
        return None
    i = len(messages) - 1
    while i >= 0 and isinstance(messages[i], ToolMessage):
        i -= 1
    return i if i >= 0 and isinstance(messages[i], AIMessage) else None


class _Emitter:
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
        self.taken_ids: set[str] = set()

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
        for kind, call_id, name in self.index.notes.get(i, ()):
            self._act(kind, call_id, name, i)
        calls = self.index.calls_by_ai.get(i, [])
        dropped = [c for c in calls if self._drops_call(c)]
        removed = [*self.index.duplicate_calls.get(i, []), *dropped]
        if removed:
            assert isinstance(message, AIMessage)
            gone = [RemovedCall(c.id, c.name, c.args, c.invalid, c.position) for c in removed]
            message = without_calls(message, gone)
        self.out.append(message)
        for call in dropped:
            self._act("call_dropped", call.id, call.name, i)
        return i if calls else None

    def _emit_result(self, i: int, message: ToolMessage) -> None:
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
        for call in self.index.calls_by_ai[ai_index]:
            if call.answer is not None:
                if not call.in_place:
                    self.out.append(self.messages[call.answer])
                    self._act("moved", call.id, call.name, call.answer)
            elif self._needs_placeholder(call):
                self.out.append(self._placeholder(call))
                self._act("placeholder", call.id, call.name, ai_index)

    def _placeholder(self, call: Call) -> ToolMessage:
        ai = self.messages[call.ai_index]
        assert isinstance(ai, AIMessage)
        pending = PendingCall(
            call.id, call.name, call.args, call.invalid, ai, call.ai_index, self.messages
        )
        return ToolMessage(
            content=self.policy.placeholder_text(pending),
            tool_call_id=call.id,
            name=call.name,
            status="error",
            id=placeholder_id(call.id, ai.id, call.ai_index, self.taken_ids),
            response_metadata={MARKER_KEY: {"synthetic": True, "reason": pending.reason}},
        )

    def _needs_placeholder(self, call: Call) -> bool:
        return call.ai_index != self.in_flight_ai and self.policy.dangling == "placeholder"

    def _drops_call(self, call: Call) -> bool:
        return (
            call.answer is None
            and call.ai_index != self.in_flight_ai
            and self.policy.dangling == "drop_call"
        )

    def _act(self, kind: Any, call_id: str | None, name: str | None, index: int) -> None:
        self.actions.append(RepairAction(kind, call_id, name, index))
