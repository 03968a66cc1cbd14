"""The text of a cancelled call's synthetic result when the application gives a reason.

The engine writes every synthetic result; cancelling only changes its policy so
the reason reaches the model. With the default texts the reason replaces the
generic ending ("...was cancelled before it completed: the user changed the
subject."); a policy with its own `placeholder` keeps its text and gets the
reason as a second sentence. Calls with unparsable arguments keep the engine's
own text, which asks the model to retry them.
"""

from __future__ import annotations

from dataclasses import replace

from ..engine import PendingCall, RepairPolicy
from ..engine.policy import PlaceholderFn

CANCELLED_BECAUSE: dict[str, str] = {
    "en": "Tool call '{name}' (id {id}) was cancelled before it completed: {reason}.",
    "zh": "工具调用 '{name}'（id {id}）在完成之前已被取消，原因是{reason}。",
}
BECAUSE: dict[str, str] = {
    "en": " Reason: {reason}.",
    "zh": "原因是{reason}。",
}
_FINAL_PUNCTUATION = ".!?\u3002\uff01\uff1f \t\n"
"""Stripped from the end of a reason, which the text ends itself (ASCII and full-width)."""


def cancel_policy(policy: RepairPolicy | None, reason: str | None) -> RepairPolicy:
    """`policy` as cancelling needs it: always answer with a result, never raise.

    Provider hygiene is left to loads and model calls: the results written here
    must answer the stored calls under their stored ids.
    """
    base = replace(policy or RepairPolicy(), dangling="placeholder", strict=False, provider=None)
    clause = (reason or "").strip().rstrip(_FINAL_PUNCTUATION)
    if not clause:
        return base
    return replace(base, placeholder=_with_reason(base, clause))


def _with_reason(base: RepairPolicy, reason: str) -> PlaceholderFn:
    def text(call: PendingCall) -> str:
        if call.invalid:
            return base.placeholder_text(call)
        if base.placeholder is None:
            template = CANCELLED_BECAUSE[base.language]
            return template.format(name=call.name, id=call.id, reason=reason)
        return base.placeholder_text(call) + BECAUSE[base.language].format(reason=reason)

    return text
