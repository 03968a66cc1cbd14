"""How `--shard K/N` splits a PostgreSQL store: contiguous ranges of thread ids.

A hash predicate cannot use the primary key index (no DDL on LangGraph's tables,
so no expression index), and every shard would walk every head. A range of
thread ids can: each shard's keyset pages scan only its part of the index, and
the N shards together read what one scan reads, plus a small sample each.

The N - 1 boundaries are weighted quantiles, in the database's own order, of a
sample of the first checkpoint (no parent) of each (thread, namespace):

- every row of the table's first `WHOLE_BLOCKS` blocks (weight 1), so a small
  store is split exactly by its heads, and
- the rows of the other blocks that `TABLESAMPLE SYSTEM` picks at
  `SAMPLE_PERCENT` with a fixed seed (weight 100 / `SAMPLE_PERCENT`): PostgreSQL
  picks a block from its number and the seed alone, so every process reading
  the same table picks the same blocks, and reads a two-hundredth of the table.

So every shard of one store computes the same boundaries, however many
processes or machines run them, and a rerun covers the same heads. First
checkpoints never change: writes on existing threads (the application's,
repairs, undos) add checkpoints with a parent, which the sample ignores, so
they move no boundary. What moves one is a thread created, or deleted, in a
sampled block between two shards' starts, or the table rewritten (VACUUM FULL,
CLUSTER). So a shard samples again after its last page and also reads what its
range gained meanwhile (`widened`): shards that run at the same time cover the
store whatever moved while they ran. Only between one shard's end and another's
start (shards run in waves) can a move leave the heads between the old and the
new boundary to two shards (harmless: runs are idempotent) or to none, until the
next run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger("langgraph_checkpoint_repair.batch")

WHOLE_BLOCKS = 64
"""The first blocks of the table, sampled whole: a store that fits is split exactly."""
SAMPLE_PERCENT = 0.5
"""The share of the other blocks sampled (SYSTEM sampling: whole blocks)."""
SAMPLED_WEIGHT = 200
"""What one sampled row stands for: 100 / SAMPLE_PERCENT rows."""
SAMPLE_SEED = 7_284_003
"""The `REPEATABLE` seed: the same blocks in every process."""

SAMPLE_SQL = f"""
SELECT thread_id, weight FROM (
    SELECT thread_id, 1 AS weight FROM checkpoints
    WHERE ctid < '({WHOLE_BLOCKS},0)'::tid AND parent_checkpoint_id IS NULL
    UNION ALL
    SELECT thread_id, {SAMPLED_WEIGHT} FROM checkpoints
        TABLESAMPLE SYSTEM ({SAMPLE_PERCENT}) REPEATABLE ({SAMPLE_SEED})
    WHERE ctid >= '({WHOLE_BLOCKS},0)'::tid AND parent_checkpoint_id IS NULL
) sample
ORDER BY thread_id"""


@dataclass(frozen=True)
class ThreadRange:
    """The thread ids of one shard: from `low` (inclusive; None: from the first) to
    `high` (exclusive; None: to the last), in the database's order."""

    low: str | None = None
    high: str | None = None
    empty: bool = False
    """No thread at all: the sample ended before this shard's share began."""

    def describe(self) -> str:
        """The range in words, ids quoted (`-v` logs it)."""
        if self.empty:
            return "no thread ids (the store's sample ends before this part)"
        low = "the first thread id" if self.low is None else repr(self.low)
        high = "the last" if self.high is None else f"{self.high!r} (excluded)"
        return f"thread ids from {low} to {high}"

    def start(self) -> tuple[str, str] | None:
        """The keyset cursor of the shard's first page: every head before `high`. The
        upper bound is the cursor, never a second condition, so the planner sees one
        shrinking index range per page, as in a scan of the whole store."""
        return None if self.high is None else (self.high, "")

    def where(self) -> tuple[list[str], dict[str, Any]]:
        """SQL conditions on `thread_id` below the cursor, and their parameters."""
        if self.empty:
            return ["FALSE"], {}
        if self.low is None:
            return [], {}
        return ["thread_id >= %(range_low)s"], {"range_low": self.low}


def first_cursor(within: ThreadRange | None) -> tuple[str, str] | None:
    """Where a run's keyset pages start: at the shard's `start`, or at the end."""
    return None if within is None else within.start()


def boundaries(sample: Sequence[Sequence[Any]], shards: int) -> list[str | None]:
    """The N - 1 cuts of a sample sorted by thread id: cut k is the first sampled id
    with at least k / N of the total weight before it (None: past the end)."""
    total = sum(int(row[1]) for row in sample)
    cuts: list[str | None] = []
    before = 0
    rows = iter(sample)
    row = next(rows, None)
    for k in range(1, shards):
        while row is not None and before * shards < k * total:
            before += int(row[1])
            row = next(rows, None)
        cuts.append(None if row is None or total == 0 else str(row[0]))
    return cuts


def shard_range(cuts: Sequence[str | None], k: int) -> ThreadRange:
    """Shard k's range between cuts k - 1 and k; a cut past the end empties every
    shard after it, and the shard before it runs to the last thread."""
    low = cuts[k - 1] if k > 0 else None
    if k > 0 and low is None:
        return ThreadRange(empty=True)
    high = cuts[k] if k < len(cuts) else None
    return ThreadRange(low, high)


def widened(old: ThreadRange, new: ThreadRange) -> list[ThreadRange]:
    """What a shard that covered `old` reads more when its range is `new` by its end
    (boundaries that moved while it ran): the parts of `new` below and above `old`.
    Thread ids compare in the database only: a part that is empty there reads nothing."""
    if new.empty:
        return []
    if old.empty:
        return [new]
    more = []
    if old.low is not None and new.low != old.low:
        more.append(ThreadRange(new.low, old.low))
    if old.high is not None and new.high != old.high:
        more.append(ThreadRange(old.high, new.high))
    return more


def announce(shard: tuple[int, int], within: ThreadRange) -> None:
    """Log which thread ids a shard covers, for an operator comparing pods (`-v`)."""
    logger.info("shard %d/%d: %s", shard[0], shard[1], within.describe())


def range_of(sample: Sequence[Sequence[Any]], shard: tuple[int, int]) -> ThreadRange:
    """Shard (K, N)'s thread ids, from the sample rows (`SAMPLE_SQL`)."""
    k, n = shard
    return shard_range(boundaries(sample, n), k)
