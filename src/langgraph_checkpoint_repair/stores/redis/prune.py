"""The sync Redis pruner: thin I/O running the steps of `prune_base` on the saver's own
server.

Threads are found by their root namespace's latest-checkpoint pointer, walked with
SCAN a page at a time (SCAN may hand a key out twice while the server resizes its
table: that thread is then visited twice, and the second visit finds nothing to do).
The archive lives on the same server, in keys named `langgraph_repair:*`, which no
saver reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ...retention.keep import StoredCheckpoint
from ...retention.outcome import Deleted, ThreadPruned
from ...retention.rules import PruneRules
from ..base import chunks
from ..pruners import CannotPrune
from . import archive
from . import prune_base as pb
from . import steps as st
from .base import PAGE
from .prune_base import now, root_pointers, thread_of
from .running import StepRunner

RETRIES = 5
"""Times an undo of one thread is tried again when the application moved a pointer
it puts back."""


class RedisPruner:
    """Prunes, restores and forgets on a RedisSaver's server."""

    forget_needs = None
    vacuums = False
    not_compacted = pb.NOT_COMPACTED

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.steps = StepRunner(saver)

    def layout(self) -> pb.Layout:
        """RedisSaver's layout, its pointers named by the saver."""
        return pb.full_layout(self.saver._make_redis_checkpoint_latest_key)

    def ready(
        self, *, archive: bool, writes: bool, recorded: bool = True, compact: bool = False
    ) -> None:
        """Nothing to make: the archive's keys are written with the first prune."""

    def thread_pages(self, threads: Sequence[str] | None) -> Iterator[list[str]]:
        if threads is not None:
            yield from chunks(self._present(threads), PAGE)
            return
        found = self.steps.redis.scan_iter(match=root_pointers(self.saver), count=PAGE)
        for page in chunks(found, PAGE):
            yield sorted({thread_of(self.saver, pointer) for pointer in page})

    def _present(self, threads: Sequence[str]) -> list[str]:
        pointers = [self.saver._make_redis_checkpoint_latest_key(t, "") for t in threads]
        there = self.steps.driven(st.read_replies([("exists", key) for key in pointers]))
        return [thread for thread, found in zip(threads, there, strict=True) if found]

    def begin_run(self, run_id: str, arguments: dict[str, Any], command: str = "prune") -> None:
        record = {"arguments": json.dumps({**arguments, "command": command})}
        self.steps.driven(archive.run_record(run_id, {**record, "started_at": now()}))

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        record = {"summary": json.dumps(summary), "finished_at": now()}
        self.steps.driven(archive.run_record(run_id, record))

    def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        return self.steps.driven(pb.prune_steps(run_id, thread_id, rules, self.layout()))

    def thread_rows(self, thread_id: str) -> list[StoredCheckpoint] | None:
        return self.steps.driven(pb.skeleton_steps(thread_id, self.layout()))

    def run_threads(self, runs: Sequence[str], threads: Sequence[str] | None) -> list[str]:
        raise CannotPrune(pb.NO_ROLLBACK)

    def pruned_threads(self, run_id: str) -> list[str] | None:
        return self.steps.driven(archive.run_threads_steps(run_id))

    def restore_needs(self, run_id: str) -> None:
        """Redis has no roles here: nothing to check."""

    def ready_to_restore(self, needs: object) -> None:
        """Nothing to make."""

    def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        for _ in range(RETRIES):
            restored = self.steps.driven(archive.restore_steps(run_id, thread_id))
            if restored is not None:
                return restored
        raise RuntimeError(f"thread {thread_id!r} kept changing while its undo ran: run it again")

    def forget(self, run_id: str) -> int:
        return self.steps.driven(archive.forget_steps(run_id))
