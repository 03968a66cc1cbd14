"""The units a trim drops, oldest first, and the messages it never drops.

A unit is an AI message with the tool results right after it (the pairing
repair has put every result there), or any other single message: a call is
never separated from its results. Leading system messages, the newest human
message, the in-flight turn and earlier markers are not units.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from .marker import removed_by


@dataclass(frozen=True)
class Layout:
    """Where things stand in a history, as a trim sees it."""

    lead: int
    """How many system messages open the history."""
    markers: dict[int, int]
    """Position of each earlier marker -> the count it carries."""
    units: list[range]
    """The droppable units, oldest first."""
    task: int | None
    """Position of the newest human message (the task the agent is on), if any."""


def layout(messages: list[BaseMessage], in_flight_at: int | None) -> Layout:
    lead = 0
    while lead < len(messages) and isinstance(messages[lead], SystemMessage):
        lead += 1
    markers: dict[int, int] = {}
    for n in range(lead, len(messages)):
        removed = removed_by(messages[n])
        if removed is not None:
            markers[n] = removed
    task = _newest_human(messages, markers)
    end = len(messages) if in_flight_at is None else in_flight_at
    units: list[range] = []
    n = lead
    while n < end:
        stop = n + 1
        if isinstance(messages[n], AIMessage):
            while stop < end and isinstance(messages[stop], ToolMessage):
                stop += 1
        if n != task and n not in markers:
            units.append(range(n, stop))
        n = stop
    return Layout(lead, markers, units, task)


def _newest_human(messages: list[BaseMessage], markers: dict[int, int]) -> int | None:
    """The task the agent is on: the last human message that is not a marker."""
    for n in range(len(messages) - 1, -1, -1):
        if isinstance(messages[n], HumanMessage) and n not in markers:
            return n
    return None
