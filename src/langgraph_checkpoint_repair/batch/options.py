"""The settings of one batch run, and the pure rules that turn an assessment into an outcome."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..engine import RepairPolicy
from ..engine.policy import DEFAULT_POLICY
from ..stores.base import PAGE_SIZE, Selection
from ..stores.plan import Assessment, new_run_id
from .report import RunReport

ProgressFn = Callable[[RunReport], None]


@dataclass(frozen=True)
class RunOptions:
    """What `repair_threads` was asked to do; recorded with the run."""

    dry_run: bool = False
    channels: Sequence[str] = ("messages",)
    threads: Sequence[str] | None = None
    min_idle: timedelta = timedelta(minutes=10)
    shard: tuple[int, int] | None = None
    concurrency: int = 4
    limit: int | None = None
    """Repair at most this many threads (canary runs); the rest wait for the next run."""
    policy: RepairPolicy = DEFAULT_POLICY
    max_writes_per_second: float | None = None
    page_size: int = PAGE_SIZE
    run_id: str = field(default_factory=new_run_id)
    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.shard is not None and not 0 <= self.shard[0] < self.shard[1]:
            raise ValueError("shard must be K/N with 0 <= K < N")
        if self.limit is not None and self.limit < 0:
            raise ValueError("limit must not be negative")

    @property
    def selection(self) -> Selection:
        return Selection(tuple(self.channels), self.threads, self.shard, self.page_size)

    def arguments(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "channels": list(self.channels),
            "threads": list(self.threads) if self.threads is not None else None,
            "min_idle_seconds": self.min_idle.total_seconds(),
            "shard": list(self.shard) if self.shard else None,
            "concurrency": self.concurrency,
            "limit": self.limit,
            "max_writes_per_second": self.max_writes_per_second,
        }


def outcome_before_writing(assessment: Assessment, dry_run: bool) -> str | None:
    """None for a clean head; a skip reason; "would_repair" in a dry run; else "repair"."""
    if assessment.status == "clean":
        return None
    if assessment.status != "repair":
        return assessment.status
    return "would_repair" if dry_run else "repair"


class Quota:
    """At most `limit` repairs across worker threads or tasks."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.left is None:
                return True
            if self.left <= 0:
                return False
            self.left -= 1
            return True

    @property
    def exhausted(self) -> bool:
        return self.left is not None and self.left <= 0


class Pacer:
    """Spaces writes to at most `per_second`; `delay()` says how long to wait first."""

    def __init__(self, per_second: float | None) -> None:
        self.interval = 1.0 / per_second if per_second else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def delay(self) -> float:
        if not self.interval:
            return 0.0
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
            return start - now
