"""The second loss: the oldest units go, one at a time, until the history fits.

The counts are taken once, a message each, and the units are dropped by
subtracting theirs: a trim is linear in the history, never a count of the whole
history per unit. A counter that does not add up per message (a model's own,
which counts a few tokens for the request itself) is checked on the result,
and its excess dropped too.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from ..hygiene.fixes import Fix
from ..policy import TokenCounter
from .counting import count_tokens
from .marker import trim_marker
from .units import Layout


@dataclass
class Trim:
    """A trim in progress: which units are gone so far."""

    messages: list[BaseMessage]
    counts: list[int]
    layout: Layout
    dropped: int = 0
    """The first `dropped` units of the layout are gone."""
    dropped_tokens: int = 0

    @property
    def removed(self) -> int:
        """Messages gone so far: this trim's and the earlier markers'."""
        units = self.layout.units[: self.dropped]
        return sum(map(len, units)) + sum(self.layout.markers.values())

    def drop(self, excess: int) -> None:
        """Drop the oldest units left until `excess` tokens are gone (or none is left)."""
        units = self.layout.units
        while excess > 0 and self.dropped < len(units):
            tokens = sum(self.counts[n] for n in units[self.dropped])
            self.dropped += 1
            self.dropped_tokens += tokens
            excess -= tokens

    def build(self, language: str) -> list[BaseMessage]:
        """The history without the dropped units and old markers, with one new marker."""
        gone = set(self.layout.markers)
        for unit in self.layout.units[: self.dropped]:
            gone.update(unit)
        lead = self.layout.lead
        kept = [n for n in range(lead, len(self.messages)) if n not in gone]
        anchor = (self.messages[kept[0]].id or str(kept[0])) if kept else "end"
        marker = trim_marker(self.removed, anchor, language)
        return [*self.messages[:lead], marker, *(self.messages[n] for n in kept)]


def drop_oldest(
    messages: list[BaseMessage],
    counts: list[int],
    layout: Layout,
    budget: int,
    counter: TokenCounter | None,
    overhead: int,
    language: str,
) -> tuple[list[BaseMessage], list[tuple[int, Fix]]]:
    """`messages` within `budget` as far as dropping units gets it, and what was done.
    With no unit to drop, the history stays as it is (its markers too), so that a
    second pass over a history that cannot fit changes nothing."""
    total = sum(counts) + overhead
    if not layout.units:
        return messages, [(0, _over(total, budget))]
    trim = Trim(messages, counts, layout)
    widest = trim_marker(trim.removed + len(messages), "", language)  # no count has more digits
    marker_tokens = count_tokens((widest,), counter)
    markers_tokens = sum(counts[n] for n in layout.markers)
    trim.drop(total - markers_tokens + marker_tokens - budget)
    out = trim.build(language)
    if counter is None:  # the approximation adds up: no need to count again
        marker_tokens = count_tokens((out[layout.lead],), None)
        total += marker_tokens - markers_tokens - trim.dropped_tokens
    else:  # its count of the whole may not be the sum of the parts
        total = count_tokens(out, counter)
        while total > budget and trim.dropped < len(layout.units):
            trim.drop(total - budget)
            out = trim.build(language)
            total = count_tokens(out, counter)
    first = layout.units[0].start
    detail = f"{trim.removed:,} messages removed in all, {trim.dropped_tokens:,} tokens this time"
    fixes = [(first, Fix("context_trimmed", detail))]
    if total > budget:
        fixes.append((0, _over(total, budget)))
    return out, fixes


def _over(total: int, budget: int) -> Fix:
    return Fix("over_budget", f"{total:,} tokens left, over the budget of {budget:,}")
