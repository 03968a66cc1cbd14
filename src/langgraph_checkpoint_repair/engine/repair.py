"""`repair_messages`: make a history satisfy the provider tool-call pairing rules.

Three steps, each paid only when the one before finds work. A cheap walk
(`scan`) proves most histories valid without allocating. When only some
blocks are wrong and every result sits in its call's block, only those
blocks are rebuilt and the rest is copied by reference (`rebuild`). When
results stray, every result is matched in order (`matching`) and the history
is emitted message by message (`emit`). Both rebuilds apply the same rules
(`fixes`) and give the same output.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .actions import HistoryError, RepairResult
from .emit import emit_history
from .fixes import Fixer
from .matching import match_history
from .policy import DEFAULT_POLICY, RepairPolicy
from .rebuild import rebuild_blocks
from .scan import scan


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
    as_list = messages if isinstance(messages, list) else list(messages)
    found = scan(as_list, in_flight)
    if found is None:
        return RepairResult(as_list, (), False)
    fixer = Fixer(as_list, policy, _in_flight_ai(as_list, in_flight))
    if found.strays:
        repaired = emit_history(as_list, match_history(as_list), fixer)
    else:
        repaired = rebuild_blocks(as_list, found.broken_blocks, fixer)
    if policy.strict and fixer.actions:
        raise HistoryError(fixer.actions)
    if all(a.kind == "unrepairable" for a in fixer.actions):
        return RepairResult(as_list, tuple(fixer.actions), False)
    return RepairResult(repaired, tuple(fixer.actions), True)


def _in_flight_ai(messages: list[BaseMessage], in_flight: bool) -> int | None:
    """Index of the last AIMessage when only tool results follow it and it may still run."""
    if not in_flight:
        return None
    i = len(messages) - 1
    while i >= 0 and isinstance(messages[i], ToolMessage):
        i -= 1
    return i if i >= 0 and isinstance(messages[i], AIMessage) else None
