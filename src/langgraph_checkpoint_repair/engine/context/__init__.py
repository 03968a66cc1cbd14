"""Context overflow (`RepairPolicy(max_input_tokens=...)`): after every other rule,
a history over its token budget is made to fit, with no model call, least loss
first.

1. `results`: every tool result over a quarter of the budget is cut to a quarter.
2. `trim`: the oldest `units` go, one at a time, until it fits; one `marker`,
   where they stood, says how many messages are gone.
3. What cannot be made to fit is reported (`over_budget`) and left as it is: no
   message goes, and no result is cut, for a history that would still not fit.

`counting` counts, each message once; `lean` proves the usual history paired and
within budget in one walk, without counting a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from langchain_core.messages import BaseMessage

from ..actions import HistoryError, RepairAction, RepairResult
from ..hygiene import in_flight_ai, input_positions
from ..hygiene.fixes import Fix
from ..policy import PROFILE_KEYS, RepairPolicy, TokenCounter
from .counting import count_each, count_tokens
from .lean import fits_paired
from .marker import removed_by
from .results import cut_long_results
from .trim import drop_oldest
from .units import layout

__all__ = ["count_tokens", "fit_context", "removed_by", "without_budget"]

Earlier = Callable[[Sequence[BaseMessage], RepairPolicy, bool], RepairResult]
"""The rules before this one, handed in so that this package imports nothing above it."""


def fit_context(
    messages: Sequence[BaseMessage], policy: RepairPolicy, in_flight: bool, earlier: Earlier
) -> RepairResult:
    """The other rules first, then the budget; strict mode reports all and changes nothing."""
    budget = policy.input_budget
    assert budget is not None
    as_list = messages if isinstance(messages, list) else list(messages)
    if _pairing_only(policy) and fits_paired(as_list, in_flight, budget):
        return RepairResult(as_list, (), False)  # what the long way finds, at least cost
    paired = earlier(as_list, without_budget(policy), in_flight)
    history = paired.messages
    counter = policy.token_counter
    counts = count_each(history, None) if counter is None else None
    total = sum(counts) if counts is not None else count_tokens(history, counter)
    if total <= budget:
        if policy.strict and paired.actions:
            raise HistoryError(paired.actions)
        return paired
    in_flight_at = in_flight_ai(history, in_flight)
    out, fixes = _least_loss(history, budget, total, counts, policy, in_flight_at)
    positions = input_positions(as_list, history)
    actions = paired.actions + tuple(
        RepairAction(f.kind, f.tool_call_id, f.tool_name, positions[n], f.detail) for n, f in fixes
    )
    if policy.strict:
        raise HistoryError(actions)
    return RepairResult(out, actions, paired.changed or out is not history)


def _pairing_only(policy: RepairPolicy) -> bool:
    """Whether a history proven paired is left as it is by the rules before this one,
    and the budget counts with the approximation, which `fits_paired` bounds."""
    return policy.token_counter is None and policy.provider is None and not policy.rewrites_content


def without_budget(policy: RepairPolicy) -> RepairPolicy:
    """`policy` with no budget: the rules that run before this one."""
    profile = policy.model_profile
    if profile is not None:
        profile = {key: value for key, value in profile.items() if key in PROFILE_KEYS}
    return replace(
        policy, max_input_tokens=None, context_reserve=None, model_profile=profile, strict=False
    )


def _least_loss(
    history: list[BaseMessage],
    budget: int,
    total: int,
    counts: list[int] | None,
    policy: RepairPolicy,
    in_flight_at: int | None,
) -> tuple[list[BaseMessage], list[tuple[int, Fix]]]:
    """Each message counted once (`counts`, when the approximation already took
    them), then the cuts and the trim work from those counts. What does not make the
    history fit is not done: it is left as it is, reported `over_budget`."""
    counter = policy.token_counter
    if counts is None:
        counts = count_each(history, counter)
    overhead = 0 if counter is None else total - sum(counts)
    cut, fixes = cut_long_results(history, counts, max(budget // 4, 1), counter, policy.language)
    if sum(counts) + overhead <= budget and _counted_fits(cut, budget, counter):
        return cut, fixes
    trimmed = drop_oldest(
        cut, counts, layout(cut, in_flight_at), budget, counter, overhead, policy.language
    )
    if trimmed is None:
        over = Fix("over_budget", f"{total:,} tokens, over the budget of {budget:,}")
        return history, [(0, over)]
    out, trim = trimmed
    return out, [*fixes, trim]


def _counted_fits(messages: list[BaseMessage], budget: int, counter: TokenCounter | None) -> bool:
    """The check on the whole, for a counter that may not add up per message."""
    return counter is None or count_tokens(messages, counter) <= budget
