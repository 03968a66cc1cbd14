"""What the saver's API showed of a store, and what it could not show.

Through the API alone, `list()` is the store's whole table of contents. A saver may
stop listing at a fixed count (langgraph-checkpoint-redis stops at 10,000, its async
shallow saver at 100) and ignore `before`, so nothing pages past it; it may list a
checkpoint its own `get_tuple` then cannot find. A run says what it was shown, warns
when the count looks like such a cap, and counts an unloadable head as a failure, so
that no run reports an all-clear for threads it never saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ...decisions.plan import tuple_key
from ...delta.channels import delta_channel_names

ROUND = 100
"""A count of checkpoints that is a multiple of this (100 at least) may be a cap."""


@dataclass
class SaverListing:
    """The checkpoints and threads one pass of `list()` handed out."""

    checkpoints: int = 0
    thread_ids: set[str] = field(default_factory=set)
    delta_namespaces: set[tuple[str, str]] = field(default_factory=set)
    """(thread, namespace) of the listed checkpoints that show a delta channel: whose
    chains a run then checks (`lost.seeds_missing`)."""

    def saw(self, tup: CheckpointTuple) -> None:
        thread_id, ns, _ = tuple_key(tup)
        self.checkpoints += 1
        self.thread_ids.add(thread_id)
        if delta_channel_names(tup):
            self.delta_namespaces.add((thread_id, ns))

    @property
    def threads(self) -> int:
        return len(self.thread_ids)

    @property
    def may_be_capped(self) -> bool:
        """A round count: the saver may have stopped there, with more in the store."""
        return self.checkpoints >= ROUND and self.checkpoints % ROUND == 0

    def to_json(self) -> dict[str, Any]:
        return {"checkpoints": self.checkpoints, "threads": self.threads,
                "may_be_capped": self.may_be_capped}  # fmt: skip


def capped_warning(listing: SaverListing) -> str:
    return (
        f"the saver's list() handed out exactly {listing.checkpoints:,} checkpoints, a "
        "round number: savers that stop at a fixed count do that "
        "(langgraph-checkpoint-redis stops at 10,000), so threads past it may not have "
        "been scanned; scan them by name (--thread), or through a driver that reads the "
        "store itself (postgresql://, sqlite:///)"
    )


class NotLoadable(LookupError):
    """The saver lists a checkpoint of the thread that its own `get_tuple` cannot find."""

    def __init__(self, config: Any) -> None:
        c = config["configurable"]
        super().__init__(
            f"the saver lists checkpoint {c['checkpoint_id']} (namespace "
            f"{c['checkpoint_ns']!r}) but its get_tuple finds nothing there: this thread "
            "cannot be checked through the saver's API"
        )


def refuses_filter(error: ValueError | NotImplementedError) -> bool:
    """A saver's `list(filter=...)` refusing a key it does not index (as Redis's do)."""
    return "filter" in str(error)


def names_run(tup: CheckpointTuple, key: str, run_id: str) -> bool:
    """Whether the checkpoint's metadata names the run: the filter, applied here where
    the saver will not."""
    return (tup.metadata or {}).get(key) == run_id
