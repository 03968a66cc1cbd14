"""`repair_messages`: make a history satisfy the provider tool-call pairing rules.

A valid history in the usual shape is proven so by `proves_paired`, at least
cost. Otherwise one cheap walk (`walk`) proves most histories valid without
allocating and, when only some blocks are wrong and every result sits in its
call's block, rebuilds just those blocks, copying the rest by reference. When
a result strays (or the data is odd), `strays` matches the ids that strayed in
order and rebuilds what they touch. Both apply the same rules (`fixes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from .actions import HistoryError, RepairResult
from .context import count_tokens, fit_context
from .fixes import Fixer
from .hygiene import in_flight_ai, repair_for_provider
from .media import repair_content
from .policy import DEFAULT_POLICY, RepairPolicy
from .proof import proves_paired
from .strays import repair_strays
from .walk import ContentNotes, walk


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
    if policy.input_budget is not None:  # every other rule first, then the token budget
        return fit_context(messages, policy, in_flight, _repair_without_budget)
    return _repair_without_budget(messages, policy, in_flight)


def _repair_without_budget(
    messages: Sequence[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> RepairResult:
    if policy.rewrites_content:  # pairing and hygiene first, then the content rules
        return repair_content(messages, policy, in_flight, _repair)
    return _repair(messages, policy, in_flight)


def _repair(
    messages: Sequence[BaseMessage],
    policy: RepairPolicy,
    in_flight: bool,
    notes: ContentNotes | None = None,
) -> RepairResult:
    """Pairing (and the provider's rules); `notes` collects what the content rules
    must look at, filled by the pairing walk as it goes."""
    if policy.provider is not None:  # pairing first, then that provider's own rules
        return repair_for_provider(messages, policy, in_flight, _repair, notes)
    as_list = messages if isinstance(messages, list) else list(messages)
    # The usual valid history, at least cost; the content rules need the walk's notes.
    if notes is None and proves_paired(as_list, in_flight):
        return RepairResult(as_list, (), False)
    fixer = Fixer(as_list, policy, in_flight_ai(as_list, in_flight))
    repaired = walk(as_list, in_flight, fixer, notes)
    if repaired is as_list:
        return RepairResult(as_list, (), False)
    if repaired is None:
        fixer = Fixer(as_list, policy, fixer.in_flight_ai)
        repaired = repair_strays(as_list, in_flight, fixer)
    if policy.strict and fixer.actions:
        raise HistoryError(fixer.actions)
    if not fixer.changed_anything():
        return RepairResult(as_list, tuple(fixer.actions), False)
    return RepairResult(repaired, tuple(fixer.actions), True)


def history_is_clean(messages: list[Any], budget: int | None = None) -> bool:
    """Whether a history needs no repair and, with a token `budget`, fits in it as
    LangChain's approximation counts it (what the engine counts with no other counter):
    the verdict on a history already decoded, where no shortcut could prove it."""
    if repair_messages(messages).changed:
        return False
    return budget is None or count_tokens(messages, None) <= budget
