"""What a prune run is asked to do, checked once, before any store is touched."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

NEVER = datetime.max.replace(tzinfo=timezone.utc)
COMPACT_KEEPS_ONE = (
    "--compact keeps each namespace's head and one snapshot under it: it takes no --keep-last"
)


@dataclass(frozen=True)
class PruneRules:
    keep_last: int = 1
    """Checkpoints kept along each namespace's chain, newest first (with what they need)."""
    recent_after: datetime = NEVER
    """A thread whose head was written after this is left to the application."""
    dry_run: bool = False
    archive: bool = True
    """Keep what is deleted, so that `undo` can put it back."""
    idle_before: datetime | None = None
    """With `--delete-idle`: a thread none of whose heads was written after this is
    deleted whole (a thread waiting on a human only with `include_waiting`)."""
    include_waiting: bool = False
    compact: bool = False
    """Write each delta channel's snapshot under the head first (`compact`); a dry run
    plans as if it were written."""
    compacted: frozenset[str] | None = None
    """In a dry run, the namespaces the compaction's checks let through (None: all): the
    plan counts those as compacted, as the real run would compact them."""

    def __post_init__(self) -> None:
        if isinstance(self.keep_last, bool) or not isinstance(self.keep_last, int):
            raise TypeError(f"keep_last must be a whole number, not {self.keep_last!r}")
        if self.keep_last < 1:
            raise ValueError(f"keep_last must be at least 1, not {self.keep_last}")
        if self.compact and self.keep_last > 1:
            raise ValueError(COMPACT_KEEPS_ONE)
