"""Heads a run in this process is writing, per saver object.

Runs through the Python API may share one saver object (threads, tasks, or a
run started from inside another's hook). On SQLite and any saver driven through
its API, a run holds the head's claim here from its last look to the end of its
`put`, and a run that finds the claim taken leaves the head alone (`claimed`) at
once, never waits: so a whole second run can fit inside the first one's window
and still store nothing twice. For an in-memory saver this is the whole lock;
SQLite adds its write transaction, for other processes. PostgreSQL's claim is its
advisory lock alone, taken in the writing transaction: it holds between runs of
one process as between processes.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator

HeadKey = tuple[str, str]
"""(thread id, namespace)."""

_held: weakref.WeakKeyDictionary[object, set[HeadKey]] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


@contextlib.contextmanager
def claim(saver: object, head: HeadKey) -> Iterator[bool]:
    """True inside the block when this run holds `head` on `saver`; False when another
    run in this process holds it (nothing is waited for)."""
    with _guard:
        held = _held.setdefault(saver, set())
        taken = head not in held
        if taken:
            held.add(head)
    try:
        yield taken
    finally:
        if taken:
            with _guard:
                held.discard(head)
