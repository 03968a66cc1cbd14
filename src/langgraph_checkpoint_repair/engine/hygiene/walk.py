"""The ordered walk that applies one provider's rules to an already paired history.

Each message goes through the rules of its role, in order; a message no rule
changes is passed on as the same object. The in-flight turn (the last
AIMessage when only its results follow, and those results) is passed on as is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from ..policy import Provider
from .content import clear_blank_reply, fill_empty_error, fill_empty_turn
from .fixes import Fix
from .ids import IdLedger, rename_calls, rename_result
from .reasoning import (
    drop_chat_rejected_blocks,
    drop_foreign_reasoning,
    drop_stale_call_blocks,
    drop_unfollowed_reasoning,
)
from .thinking import drop_unverifiable_thinking

AiRule = Callable[[AIMessage], tuple[AIMessage, list[Fix]]]

AI_RULES: dict[Provider, tuple[AiRule, ...]] = {
    "anthropic": (drop_unverifiable_thinking,),
    "openai": (drop_chat_rejected_blocks,),
    "openai-responses": (drop_stale_call_blocks, drop_foreign_reasoning, drop_unfollowed_reasoning),
    "mistral": (),
    "bedrock": (),
}
"""Content rules per provider, in order (R1 after what may remove a following item)."""


@dataclass
class HygieneWalk:
    """Walks a paired history once; `out` and `fixes` (output position, fix) are the result."""

    provider: Provider
    language: str
    in_flight_ai: int | None
    out: list[BaseMessage] = field(default_factory=list)
    fixes: list[tuple[int, Fix]] = field(default_factory=list)

    def run(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        ledger = IdLedger(self.provider)
        renames: dict[str, str] = {}
        last = len(messages) - 1
        for n, message in enumerate(messages):
            if self.in_flight_ai is not None and n >= self.in_flight_ai:
                self.out.append(message)  # nothing but its results follows it
            elif isinstance(message, ToolMessage):
                filled, found = self._result(message)
                self._emit(n, rename_result(filled, renames), found)
            elif isinstance(message, AIMessage):
                fixed, found = self._ai(message, final=n == last)
                renames = ledger.renames_for(fixed)
                if renames:
                    fixed, named = rename_calls(fixed, renames)
                    found += named
                self._emit(n, fixed, found)
            else:
                renames = {}
                self._emit(n, *self._other(message))
        return self.out

    def _emit(self, position: int, message: BaseMessage, found: list[Fix]) -> None:
        self.out.append(message)
        if found:
            self.fixes.extend((position, fix) for fix in found)

    def _ai(self, message: AIMessage, final: bool) -> tuple[AIMessage, list[Fix]]:
        found: list[Fix] = []
        for rule in AI_RULES[self.provider]:
            message, more = rule(message)
            found += more
        if self.provider == "anthropic" and not final:
            message, more = clear_blank_reply(message)
            found += more
        return message, found

    def _result(self, message: ToolMessage) -> tuple[ToolMessage, list[Fix]]:
        if self.provider != "anthropic":
            return message, []
        return fill_empty_error(message, self.language)

    def _other(self, message: BaseMessage) -> tuple[BaseMessage, list[Fix]]:
        if self.provider != "anthropic" or isinstance(message, SystemMessage):
            return message, []
        return fill_empty_turn(message, self.language)
