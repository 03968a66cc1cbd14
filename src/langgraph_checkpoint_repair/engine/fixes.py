"""The rules that rewrite one block, shared by both ways of rebuilding a history.

One small method per rule: notes for id-less and duplicate calls, dropping an
unanswered call (`drop_call`), answering one with a synthetic result. Each
records its action, in the order the reference walk would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from ..codes import ActionKind
from .actions import RepairAction, fast_action
from .calls import Call, MessageCalls
from .policy import DEFAULT_TEXTS, PendingCall, RepairPolicy
from .synthetic import Maker, placeholder_id, result_maker, synthetic_result
from .traces import without_calls

BlockFix = Callable[[AIMessage, int, Any, list[BaseMessage]], None]


class Fixer:
    """Applies the rules to the blocks it is handed and keeps their actions."""

    def __init__(
        self, messages: list[BaseMessage], policy: RepairPolicy, in_flight_ai: int | None
    ) -> None:
        self.messages = messages
        self.policy = policy
        self.in_flight_ai = in_flight_ai
        self.actions: list[RepairAction] = []
        self._unrepairable = 0
        self._taken_ids: set[str] = set()
        self._fillers = policy.fillers()

    def act(self, kind: ActionKind, call_id: str | None, name: str | None, index: int) -> None:
        self.actions.append(RepairAction(kind, call_id, name, index))
        if kind == "unrepairable":
            self._unrepairable += 1

    def changed_anything(self) -> bool:
        """Whether an action changed the history: all but `unrepairable` do.
        Counted as they come, as a broken store has thousands of actions."""
        return len(self.actions) > self._unrepairable

    def fix_call_message(
        self, index: int, message: AIMessage, calls: MessageCalls, unanswered: Sequence[Call]
    ) -> AIMessage:
        """The AIMessage to emit: without its duplicate calls, and without its
        unanswered ones under `drop_call`."""
        for note in calls.notes:
            self.act(note.kind, note.call_id, note.name, index)
        dropped = unanswered if self._drops_calls(index) else ()
        for call in dropped:
            self.act("call_dropped", call.id, call.name, index)
        removed = [*calls.duplicates, *dropped]
        return without_calls(message, removed) if removed else message

    def answer(self, call: Call, ai_index: int, out: list[BaseMessage]) -> None:
        """Append a synthetic result for an unanswered call, unless it may still run."""
        if ai_index != self.in_flight_ai and self.policy.dangling == "placeholder":
            self._answer(call.id, call.name, call.args, call.invalid, ai_index, out)

    def block_fix(self) -> BlockFix | None:
        """How to answer the calls of a sound block (ids present and distinct, no
        invalid call) that got no result, without the general bookkeeping: this
        runs once per broken turn of a broken store. None when the policy drops
        calls. `waiting` is the one id left unanswered, or the set of them."""
        if self.policy.dangling != "placeholder":
            return None
        make = self._result_maker("cancelled")
        in_flight_ai, taken, add_action = self.in_flight_ai, self._taken_ids, self.actions.append

        def fix(message: AIMessage, ai_index: int, waiting: Any, out: list[BaseMessage]) -> None:
            if ai_index == in_flight_ai:
                return
            lone = type(waiting) is str
            ai_id = message.id or ai_index
            for entry in message.tool_calls:
                call_id: str = entry["id"]  # type: ignore[assignment]  # sound: a str
                if not lone and call_id not in waiting:
                    continue
                name = entry.get("name") or ""
                if make is None:
                    self._answer(call_id, name, entry.get("args"), False, ai_index, out)
                    continue
                message_id = f"repair-{call_id}-{ai_id}"
                if message_id in taken:
                    message_id = placeholder_id(call_id, message.id, ai_index, taken)
                taken.add(message_id)
                out.append(make(call_id, name, message_id))
                add_action(fast_action("placeholder", call_id, name, ai_index))

        return fix

    def _result_maker(self, reason: str) -> Maker | None:
        """The synthetic results for `reason`, made in one call; None for a
        callable placeholder, which sees each call."""
        fill = self._fillers.get(reason)
        if fill is None:
            return None
        template = self.policy.placeholder
        if not isinstance(template, str):
            template = DEFAULT_TEXTS[self.policy.language][reason]
        return result_maker(template, reason, fill)

    def _answer(
        self,
        call_id: str,
        name: str,
        args: Any,
        invalid: bool,
        ai_index: int,
        out: list[BaseMessage],
    ) -> None:
        reason = "invalid_arguments" if invalid else "cancelled"
        fill = self._fillers.get(reason)
        if fill is not None:
            text = fill(name, call_id, reason)
        else:
            call = Call(call_id, name, args, invalid, 0)
            text = self.policy.text_for(
                call_id, name, reason, lambda: self._pending(call, ai_index)
            )
        message_id = placeholder_id(call_id, self.messages[ai_index].id, ai_index, self._taken_ids)
        out.append(synthetic_result(text, call_id, name, message_id, reason))
        self.actions.append(RepairAction("placeholder", call_id, name, ai_index))

    def _drops_calls(self, ai_index: int) -> bool:
        return self.policy.dangling == "drop_call" and ai_index != self.in_flight_ai

    def _pending(self, call: Call, ai_index: int) -> PendingCall:
        ai = self.messages[ai_index]
        assert isinstance(ai, AIMessage)
        return PendingCall(call.id, call.name, call.args, call.invalid, ai, ai_index, self.messages)
