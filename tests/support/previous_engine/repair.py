"""`repair_messages`: make a history satisfy the provider tool-call pairing rules.

One cheap walk (`walk`) proves most histories valid without allocating and,
when only some blocks are wrong and every result sits in its call's block,
rebuilds just those blocks, copying the rest by reference. When a result
strays (or the data is odd), `strays` matches the ids that strayed in order
and rebuilds what they touch. Both apply the same rules (`fixes`).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_checkpoint_repair.engine.hygiene import repair_for_provider
from langgraph_checkpoint_repair.engine.policy import DEFAULT_POLICY, RepairPolicy
from langgraph_checkpoint_repair.engine.strays import repair_strays

from .actions import HistoryError, RepairResult
from .fixes import Fixer
from .walk import walk


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
        return repair_for_provider(messages, policy, in_flight, _pairing)
    as_list = messages if isinstance(messages, list) else list(messages)
    fixer = Fixer(as_list, policy, _in_flight_ai(as_list, in_flight))
    repaired = walk(as_list, in_flight, fixer)
    if repaired is as_list:
        return RepairResult(as_list, (), False)
    if repaired is None:
        fixer = Fixer(as_list, policy, fixer.in_flight_ai)
        repaired = repair_strays(as_list, in_flight, fixer)  # type: ignore[arg-type]  # same methods
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


def _pairing(
    messages: Sequence[BaseMessage], policy: RepairPolicy, in_flight: bool, notes: object
) -> RepairResult:
    """The pairing repair as the package's provider rules call it (the notes are the
    content rules', which this engine predates)."""
    return repair_messages(messages, policy=policy, in_flight=in_flight)
