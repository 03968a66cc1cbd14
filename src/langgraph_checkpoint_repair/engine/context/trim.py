"""The second loss: the oldest units go, one at a time, until the history fits.

The counts are taken once, a message each, and the units are dropped by
subtracting theirs: a trim is linear in the history, never a count of the whole
history per unit. A counter that does not add up per message (a model's own,
which counts a few tokens for the request itself) is checked on the result,
and its excess dropped too.

Nothing goes for nothing: a trim that would still leave the history over its
budget is not made (`drop_oldest` says None), so no message is lost for a
history no model can read anyway.
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
    marker: BaseMessage | None = None
    """The marker `build` put in last."""

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
        """The history without the dropped units and old markers, with one new marker
        where the removed messages stood (`marker_place`)."""
        gone = set(self.layout.markers)
        for unit in self.layout.units[: self.dropped]:
            gone.update(unit)
        lead = self.layout.lead
        kept = [n for n in range(lead, len(self.messages)) if n not in gone]
        at = self.marker_place(kept)
        anchor = (self.messages[kept[at]].id or str(kept[at])) if at < len(kept) else "end"
        self.marker = marker = trim_marker(self.removed, anchor, language)
        messages = self.messages
        return [
            *messages[:lead],
            *(messages[n] for n in kept[:at]),
            marker,
            *(messages[n] for n in kept[at:]),
        ]

    def marker_place(self, kept: list[int]) -> int:
        """Where among the `kept` positions the marker goes: right after the task when
        messages that came after it are gone (the oldest go first, so nothing older
        than the task is left but the task), else first, after the system messages."""
        task = self.layout.task
        units = self.layout.units
        if task is None or not self.dropped or units[self.dropped - 1].start < task:
            return 0
        return kept.index(task) + 1


def drop_oldest(
    messages: list[BaseMessage],
    counts: list[int],
    layout: Layout,
    budget: int,
    counter: TokenCounter | None,
    overhead: int,
    language: str,
) -> tuple[list[BaseMessage], tuple[int, Fix]] | None:
    """`messages` within `budget`, the oldest units dropped, and what was done (at the
    first message removed); None when dropping every unit would still leave it over
    (then nothing is dropped)."""
    if not layout.units:
        return None
    total = sum(counts) + overhead
    trim = Trim(messages, counts, layout)
    widest = trim_marker(trim.removed + len(messages), "", language)  # no count has more digits
    marker_tokens = count_tokens((widest,), counter)
    markers_tokens = sum(counts[n] for n in layout.markers)
    units_tokens = sum(counts[n] for unit in layout.units for n in unit)
    if total - markers_tokens - units_tokens + marker_tokens > budget:
        return None  # even the fewest messages do not fit
    trim.drop(total - markers_tokens + marker_tokens - budget)
    out = trim.build(language)
    if counter is None:  # the approximation adds up: no need to count again
        assert trim.marker is not None
        total += count_tokens((trim.marker,), None) - markers_tokens - trim.dropped_tokens
    else:  # its count of the whole may not be the sum of the parts
        total = count_tokens(out, counter)
        while total > budget and trim.dropped < len(layout.units):
            trim.drop(total - budget)
            out = trim.build(language)
            total = count_tokens(out, counter)
    if total > budget:
        return None
    detail = f"{trim.removed:,} messages removed in all, {trim.dropped_tokens:,} tokens this time"
    return out, (layout.units[0].start, Fix("context_trimmed", detail))
