"""Provider hygiene (`RepairPolicy.provider`): after the portable pairing repair, fix
what one provider rejects in a stored history and no later run fixes by itself.

One small module per rule family: `ids` (I1-I3), `thinking` (T1-T4), `content`
(C1-C3), `reasoning` (R1-R4, O1); `walk` applies them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ..actions import HistoryError, RepairAction, RepairResult
from ..policy import RepairPolicy
from .walk import HygieneWalk

Pairing = Callable[..., RepairResult]
"""The pairing repair, handed in so that this package imports nothing above it."""


def repair_for_provider(
    messages: Sequence[BaseMessage],
    policy: RepairPolicy,
    in_flight: bool,
    pairing: Pairing,
    notes: object = None,
) -> RepairResult:
    """The pairing repair, then `policy.provider`'s rules; strict mode reports both.
    `notes` goes to the pairing walk (see `walk.ContentNotes`)."""
    assert policy.provider is not None
    portable = replace(policy, provider=None, strict=False)
    paired = pairing(messages, portable, in_flight, notes)
    walk = HygieneWalk(policy.provider, policy.language, in_flight_ai(paired.messages, in_flight))
    out = walk.run(paired.messages)
    positions = input_positions(messages, paired.messages)
    actions = paired.actions + tuple(
        RepairAction(f.kind, f.tool_call_id, f.tool_name, positions[n], f.detail)
        for n, f in walk.fixes
    )
    if policy.strict and actions:
        raise HistoryError(actions)
    if not walk.fixes:
        return RepairResult(paired.messages, actions, paired.changed)
    return RepairResult(out, actions, True)


def in_flight_ai(messages: list[BaseMessage], in_flight: bool) -> int | None:
    """The last AIMessage when only tool results follow it: its turn may still run."""
    if not in_flight:
        return None
    n = len(messages) - 1
    while n >= 0 and isinstance(messages[n], ToolMessage):
        n -= 1
    return n if n >= 0 and isinstance(messages[n], AIMessage) else None


def input_positions(original: Sequence[BaseMessage], paired: list[BaseMessage]) -> list[int]:
    """For each paired message, its position in the input (`RepairAction.index`).

    The pairing repair never reorders non-tool messages and keeps real results as
    the same objects; a synthetic result gets the position of the call's message.
    """
    if paired is original:
        return list(range(len(paired)))
    results = {id(m): n for n, m in enumerate(original) if isinstance(m, ToolMessage)}
    turns = iter([n for n, m in enumerate(original) if not isinstance(m, ToolMessage)])
    positions: list[int] = []
    current = 0
    for message in paired:
        if isinstance(message, ToolMessage):
            positions.append(results.get(id(message), current))
        else:
            current = next(turns, current)
            positions.append(current)
    return positions
