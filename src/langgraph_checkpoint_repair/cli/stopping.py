"""SIGINT and SIGTERM end a run gently: the handlers only set a flag that the run
checks between threads and while it waits for its write rate, so writes under way
finish, nothing is half-written, and the summary so far is still printed."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class StopRequest:
    """Set by the first SIGINT or SIGTERM; `exit_code` is 128 + that signal's number."""

    event: threading.Event = field(default_factory=threading.Event)
    signum: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        self.event.set()

    @property
    def exit_code(self) -> int | None:
        return None if self.signum is None else 128 + self.signum

    @property
    def name(self) -> str:
        return "" if self.signum is None else signal.Signals(self.signum).name


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Route SIGINT and SIGTERM to a `StopRequest` while the block runs (main thread only)."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    previous: dict[int, Any] = {sig: signal.signal(sig, request) for sig in SIGNALS}
    try:
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
