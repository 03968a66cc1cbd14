"""A SQLite checkpoint's values as stored (the integrity findings), and the `types`
inventory's pages: the SQL and the row mapping both SQLite stores share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...decoding.integrity import StoredValue
from ...decoding.names import channel_blobs
from ..stored_values import WHOLE_CHECKPOINT, ThreadBlobs, values_from_rows

CHECKPOINT_SQL = """
SELECT type, checkpoint FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
WRITES_SQL = """
SELECT channel, type, value, task_id, idx FROM writes
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
ORDER BY task_id, idx"""


def stored_values(
    checkpoint: Sequence[Any] | None, writes: Sequence[Sequence[Any]]
) -> list[StoredValue]:
    """SQLite keeps a checkpoint as one blob: each channel's value is cut out of it as
    its own msgpack (extensions kept as stored), so a finding names its channel."""
    values = [] if checkpoint is None else _channels_of(str(checkpoint[0]), bytes(checkpoint[1]))
    return values + values_from_rows(writes)


def _channels_of(type_: str, blob: bytes) -> list[StoredValue]:
    blobs = channel_blobs(blob) if type_ == "msgpack" else None
    if blobs is None:  # the whole checkpoint does not read: the finding says so
        return [StoredValue(WHOLE_CHECKPOINT, type_, blob)]
    return [StoredValue(name, "msgpack", value) for name, value in blobs.items()]


CHECKPOINT_TYPES_SQL = """
SELECT c.thread_id, c.checkpoint FROM checkpoints c
WHERE c.type = 'msgpack' AND c.thread_id IN ({marks}) AND {which}"""
WRITE_TYPES_SQL = """
SELECT c.thread_id, w.value FROM checkpoints c
JOIN writes w
    ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
    AND w.checkpoint_id = c.checkpoint_id
WHERE w.type = 'msgpack' AND c.thread_id IN ({marks}) AND {which}"""
HEAD_ONLY = """c.checkpoint_id = (
    SELECT max(checkpoint_id) FROM checkpoints h
    WHERE h.thread_id = c.thread_id AND h.checkpoint_ns = c.checkpoint_ns)"""
THREADS_AFTER_SQL = """
SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ? ORDER BY thread_id LIMIT ?"""
FIRST_THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id LIMIT ?"""


def threads_query(after: str | None, page_size: int) -> tuple[str, tuple[Any, ...]]:
    """A page of thread ids after the cursor (the first page has none: "" is a thread)."""
    if after is None:
        return FIRST_THREADS_SQL, (page_size,)
    return THREADS_AFTER_SQL, (after, page_size)


def types_queries(threads: Sequence[str], all_checkpoints: bool) -> tuple[str, str]:
    """The checkpoint and write queries of a page of threads (the threads as parameters)."""
    which = "TRUE" if all_checkpoints else HEAD_ONLY
    marks = ", ".join("?" * len(threads))
    return (
        CHECKPOINT_TYPES_SQL.format(marks=marks, which=which),
        WRITE_TYPES_SQL.format(marks=marks, which=which),
    )


def thread_blobs(threads: Sequence[str], rows: Sequence[Sequence[Any]]) -> ThreadBlobs:
    """Rows of (thread, blob) grouped by thread, every thread of the page listed."""
    grouped: dict[str, list[bytes]] = {str(thread_id): [] for thread_id in threads}
    for thread_id, blob in rows:
        if blob is not None:
            grouped[str(thread_id)].append(bytes(blob))
    return list(grouped.items())
