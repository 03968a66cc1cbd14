"""A checkpoint's values as stored, for the integrity findings (`decoding.integrity`):
the row shapes every driver's stored-values query returns (each driver's folder holds
its SQL), and what a page's rows of other values say. A store that only has the
saver's API has no bytes to show."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..decoding.integrity import Decode, StoredValue, Trust, suspect
from ..in_flight import INTERRUPT_CHANNEL
from ..stale_answers import is_null_answer

WHOLE_CHECKPOINT = ""
"""The channel of a value that is the whole checkpoint (SQLite stores it as one blob)."""


def key_params(key: Sequence[str]) -> dict[str, str]:
    thread_id, checkpoint_ns, checkpoint_id = key
    return {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}


def values_from_rows(rows: Sequence[Sequence[Any]]) -> list[StoredValue]:
    """Rows of (channel, type, blob, task_id, idx) as stored values."""
    return [
        StoredValue(str(channel), type_, None if blob is None else bytes(blob), task_id, idx)
        for channel, type_, blob, task_id, idx in rows
    ]


def answering_heads(rows: Sequence[Sequence[Any]]) -> set[tuple[str, str, str]]:
    """The heads whose pending writes (rows of thread, namespace, checkpoint, channel,
    type, blob, task id: `stores.postgres.base.split_rows`) hold a null-task answer beside an
    open question: those that may hold a stale answer (`stale_answers`)."""
    answering: set[tuple[str, str, str]] = set()
    asking: set[tuple[str, str, str]] = set()
    for row in rows:
        if row[6] is None:  # a channel's blob, not a pending write: most rows
            continue
        if row[3] == INTERRUPT_CHANNEL:
            asking.add((row[0], row[1], row[2]))
        elif is_null_answer((row[6], row[3], None)):
            answering.add((row[0], row[1], row[2]))
    return answering & asking


def answering_writes(
    rows: Sequence[Sequence[Any]], answering: set[tuple[str, str, str]]
) -> dict[tuple[str, str, str], tuple[StoredValue, ...]]:
    """The pending writes of the `answering` heads (`answering_heads`), as
    `POSTGRES_VALUES_SQL` gives them (a write's index last in each row): a run that
    deletes a stale answer plans it from these, read once with the page."""
    writes: dict[tuple[str, str, str], list[StoredValue]] = {}
    if not answering:
        return {}
    for row in rows:
        key = (row[0], row[1], row[2])
        if key not in answering or row[6] is None:
            continue
        channel, type_, blob, task_id = row[3], row[4], row[5], row[6]
        blob = None if blob is None else bytes(blob)
        writes.setdefault(key, []).append(StoredValue(str(channel), type_, blob, task_id, row[8]))
    return {key: tuple(sorted(found, key=_write_order)) for key, found in writes.items()}


def _write_order(value: StoredValue) -> tuple[str, str, int]:
    """`POSTGRES_VALUES_SQL`'s order of pending writes: task, channel, index."""
    return (str(value.task_id), value.channel, value.idx or 0)


def suspect_heads(
    rows: Sequence[Sequence[Any]], trust: Trust, decode: Decode, nul_matters: bool
) -> set[tuple[str, str, str]]:
    """The heads whose other values (rows of thread, namespace, checkpoint, channel, type,
    blob, task id: `stores.postgres.base.split_rows`) may hold an integrity finding."""
    suspects: set[tuple[str, str, str]] = set()
    for row in rows:
        thread_id, ns, checkpoint_id, channel, type_, blob, task_id = row[:7]
        key = (thread_id, ns, checkpoint_id)
        if key in suspects:
            continue
        value = StoredValue(channel, type_, None if blob is None else bytes(blob), task_id)
        if suspect(value, trust, decode, nul_matters):
            suspects.add(key)
    return suspects


ThreadBlobs = list[tuple[str, list[bytes]]]
"""A page of the inventory: each thread id with the msgpack blobs read for it."""


def thread_blobs(rows: Sequence[Sequence[Any]]) -> ThreadBlobs:
    """Rows of (thread, namespace, blob) grouped by thread, in their order."""
    grouped: dict[str, list[bytes]] = {}
    for thread_id, _, blob in rows:
        found = grouped.setdefault(str(thread_id), [])
        if blob is not None:
            found.append(bytes(blob))
    return list(grouped.items())
