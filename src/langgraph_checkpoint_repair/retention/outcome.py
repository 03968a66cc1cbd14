"""What pruning one thread did, as every store reports it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Skip = Literal[
    "recent",
    "claimed",
    "changed",
    "unreadable",
    "delta_seed_missing",
    "compact_unproven",
    "delta_chain",
    "delta_not_compacted",
    "built_on",
]
"""Why a thread was left as it was: written within --min-idle (the application may be
writing to it), another prune holds it, the application changed a row the prune was
deleting (a rerun finishes it), a row that does not decode (SQLite keeps values inside
the checkpoint, and a prune must read them to know what a row stores), a delta channel
whose chain another prune already cut (`retention.keep.seed_missing`): never guessed
at, a compaction's snapshot that did not rebuild the head's messages (`compact`), delta
chains that need every checkpoint the thread keeps (`--compact` frees them), or a
compaction refused (a delta channel whose value cannot be rebuilt here), or, for a
rollback, a run every checkpoint of which a later run's checkpoints need."""

TABLES = ("checkpoints", "writes", "blobs")


@dataclass
class Deleted:
    """Rows and their logical bytes, per table."""

    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    bytes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))

    def add(self, table: str, rows: int, size: int) -> None:
        self.rows[table] += rows
        self.bytes[table] += size

    def merge(self, other: Deleted) -> None:
        for table in TABLES:
            self.add(table, other.rows[table], other.bytes[table])


@dataclass
class ThreadPruned:
    """One thread's outcome: what was (or, in a dry run, would be) deleted, or why it was
    left alone."""

    thread_id: str
    deleted: Deleted = field(default_factory=Deleted)
    skipped: Skip | None = None
    detail: str = ""
    whole: bool = False
    """The whole thread was deleted (`--delete-idle`)."""
    freeable: int = 0
    """For `delta_chain`: the checkpoints `--compact` would free."""
    built_on: int = 0
    """For a rollback: the run's checkpoints kept, because a later run's need them."""

    @property
    def pruned(self) -> bool:
        return self.skipped is None and self.deleted.rows["checkpoints"] > 0
