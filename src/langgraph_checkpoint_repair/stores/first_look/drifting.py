"""Which heads of a page the graph given with `--graph` may strand, from the first look's
rows alone: a root head is cleared when every channel it stores is one of the graph's
(the query lists those it is not: `unknown`) and it holds no pending send. Every other
head is loaded and checked (`drift.findings`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...waiting import SENDS_CHANNEL

HeadKey = tuple[str, str, str]
CHANNEL, UNKNOWN = 5, 11
"""Positions in a heads query row: the value's channel, the stored channels the graph lacks."""


def drift_suspects(rows: Sequence[Sequence[Any]]) -> set[HeadKey]:
    """The heads whose rows name a channel the graph lacks, or a pending send."""
    return {
        (row[0], row[1], row[2]) for row in rows if row[UNKNOWN] or row[CHANNEL] == SENDS_CHANNEL
    }


def may_drift(key: HeadKey, suspects: set[HeadKey] | None) -> bool:
    """Whether the head must be loaded to be checked: without a graph's look (None), a
    subgraph's head (its graph is another), or a suspect."""
    return suspects is None or bool(key[1]) or key in suspects
