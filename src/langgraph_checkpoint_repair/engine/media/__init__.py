"""Oversized and unsupported content: after the pairing repair
(and the provider's hygiene), media a model or provider refuses on every later
call is replaced or downscaled, and tool results over `max_result_chars` are cut.

`blocks` finds inline media in any stored form, `measure` reads sizes and
dimensions from headers, `limits` holds who takes what, `rules` applies them to
one message, `scrub` removes copies of removed bytes, `truncate` and `downscale`
do the rewriting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from operator import attrgetter

from langchain_core.messages import BaseMessage

from ..actions import HistoryError, RepairAction, RepairResult
from ..hygiene import in_flight_ai, input_positions
from ..hygiene.fixes import Fix
from ..policy import RepairPolicy
from ..walk import ContentNotes
from .rules import ContentRules, rules_for

Pairing = Callable[[Sequence[BaseMessage], RepairPolicy, bool, ContentNotes], RepairResult]
"""The pairing repair (and hygiene), handed in so that this package imports nothing
above it; it fills the `ContentNotes` as its walk goes."""


def repair_content(
    messages: Sequence[BaseMessage], policy: RepairPolicy, in_flight: bool, pairing: Pairing
) -> RepairResult:
    """The pairing repair and hygiene, then the content rules; strict mode reports all."""
    earlier = replace(policy, media="keep", max_result_chars=None, model_profile=None, strict=False)
    notes = ContentNotes(policy.max_result_chars)
    paired = pairing(messages, earlier, in_flight, notes)
    rules = rules_for(
        policy.provider,
        policy.model_profile,
        policy.media,
        policy.max_result_chars,
        policy.language,
    )
    noted = notes.positions if notes.complete and paired.messages is messages else None
    out, fixes = apply_content_rules(
        paired.messages, rules, in_flight_ai(paired.messages, in_flight), noted
    )
    if not fixes:
        if policy.strict and paired.actions:
            raise HistoryError(paired.actions)
        return paired
    positions = input_positions(messages, paired.messages)
    actions = paired.actions + tuple(
        RepairAction(f.kind, f.tool_call_id, f.tool_name, positions[n], f.detail) for n, f in fixes
    )
    if policy.strict:
        raise HistoryError(actions)
    return RepairResult(out, actions, True)


_content = attrgetter("content")


def _nothing_to_look_at(messages: list[BaseMessage], rules: ContentRules) -> bool:
    """True when every content is a string within `max_result_chars`: no media can
    hide there and nothing needs cutting. Decided in C (`map`), so a history
    without media costs the rules next to nothing."""
    contents = list(map(_content, messages))
    if set(map(type, contents)) - {str}:
        return False
    limit = rules.max_result_chars
    return limit is None or max(map(len, contents), default=0) <= limit


def apply_content_rules(
    messages: list[BaseMessage],
    rules: ContentRules,
    in_flight_at: int | None,
    noted: list[int] | None,
) -> tuple[list[BaseMessage], list[tuple[int, Fix]]]:
    """Each message through the rules but the in-flight AI message, whose calls may
    still run. The results already stored after it are finished: a result too big
    for the model is what bricks a thread right after its tool ran, so they are
    judged like any other (their ids, which the pending calls need, never change)."""
    if noted is None and _nothing_to_look_at(messages, rules):
        return messages, []
    out: list[BaseMessage] | None = None
    fixes: list[tuple[int, Fix]] = []
    limit = rules.max_result_chars
    for n in range(len(messages)) if noted is None else noted:
        message = messages[n]
        if n == in_flight_at:
            continue
        content = message.content
        if content.__class__ is str and (limit is None or len(content) <= limit):
            continue  # the common case, decided without a call
        fixed, found = rules.apply(message)
        if fixed is not messages[n]:
            if out is None:
                out = list(messages)
            out[n] = fixed
            fixes.extend((n, fix) for fix in found)
    return (out if out is not None else messages), fixes
