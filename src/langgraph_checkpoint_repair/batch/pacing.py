"""How fast a run writes and how many repairs it may make: the pace and the quota its
worker threads or tasks share, each stopping early when the run is asked to stop."""

from __future__ import annotations

import asyncio
import threading
import time


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

    def give_back(self) -> None:
        """Return a repair that was not written (another run holds the thread, or it
        moved on): only repairs this run wrote count against the limit."""
        with self._lock:
            if self.left is not None:
                self.left += 1


class Pacer:
    """Spaces writes to at most `per_second`. Waits end early when `stop` is set, so a
    run at any rate, however slow, stops within a moment of being asked to."""

    def __init__(self, per_second: float | None, stop: threading.Event) -> None:
        self.interval = 1.0 / per_second if per_second else 0.0
        self.stop = stop
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

    def wait(self) -> bool:
        """Wait for this write's turn; False when the run was stopped meanwhile."""
        deadline = time.monotonic() + self.delay()
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            self.stop.wait(min(left, _LONGEST_WAIT))
        return False

    async def await_turn(self) -> bool:
        """The async twin of `wait`: sleeps in short slices, checking the stop flag."""
        deadline = time.monotonic() + self.delay()
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            await asyncio.sleep(min(left, _ASYNC_SLICE))
        return False


_LONGEST_WAIT = 3600.0  # Event.wait refuses timeouts above threading.TIMEOUT_MAX
_ASYNC_SLICE = 0.1  # a threading.Event cannot wake an event loop: look this often
