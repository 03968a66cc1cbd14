"""A checkpoint's values as stored, for the integrity findings (`decoding.integrity`):
the SQL and row shapes of LangGraph's PostgreSQL and SQLite tables, shared by the
sync and async stores. A store that only has the saver's API has no bytes to show."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..decoding.integrity import Decode, StoredValue, Trust, suspect
from ..decoding.names import channel_blobs
from ..in_flight import INTERRUPT_CHANNEL
from ..stale_answers import is_null_answer

POSTGRES_VALUES_SQL = """
SELECT b.channel, b.type, b.blob, NULL::text AS task_id, NULL::integer AS idx
FROM checkpoints c
CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v (channel, version)
JOIN checkpoint_blobs b
    ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
    AND b.channel = v.channel AND b.version = v.version
WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
    AND c.checkpoint_id = %(checkpoint_id)s
UNION ALL
SELECT w.channel, w.type, w.blob, w.task_id, w.idx
FROM checkpoint_writes w
WHERE w.thread_id = %(thread_id)s AND w.checkpoint_ns = %(checkpoint_ns)s
    AND w.checkpoint_id = %(checkpoint_id)s
ORDER BY 4 NULLS FIRST, 1, 5"""

SQLITE_CHECKPOINT_SQL = """
SELECT type, checkpoint FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
SQLITE_WRITES_SQL = """
SELECT channel, type, value, task_id, idx FROM writes
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
ORDER BY task_id, idx"""

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


def sqlite_values(
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


def answering_heads(rows: Sequence[Sequence[Any]]) -> set[tuple[str, str, str]]:
    """The heads whose pending writes (rows of thread, namespace, checkpoint, channel,
    type, blob, task id: `postgres.base.split_rows`) hold a null-task answer beside an
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
    blob, task id: `postgres.base.split_rows`) may hold an integrity finding."""
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


# The `types` inventory: every msgpack value of each head (its channels at their
# versions, its pending writes), a page of heads at a time; or with the whole history,
# every value of a page of threads.
POSTGRES_HEAD_TYPES_SQL = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns)
        thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
    FROM checkpoints
    WHERE {where}
    ORDER BY thread_id DESC, checkpoint_ns DESC, checkpoint_id DESC
    LIMIT %(page)s
)
SELECT h.thread_id, h.checkpoint_ns, x.blob
FROM heads h
LEFT JOIN LATERAL (
    SELECT b.blob
    FROM jsonb_each_text(h.versions) AS v (channel, version)
    JOIN checkpoint_blobs b
        ON b.thread_id = h.thread_id AND b.checkpoint_ns = h.checkpoint_ns
        AND b.channel = v.channel AND b.version = v.version
    WHERE b.type = 'msgpack'
    UNION ALL
    SELECT w.blob
    FROM checkpoint_writes w
    WHERE w.thread_id = h.thread_id AND w.checkpoint_ns = h.checkpoint_ns
        AND w.checkpoint_id = h.checkpoint_id AND w.type = 'msgpack'
) x ON TRUE
ORDER BY h.thread_id DESC, h.checkpoint_ns DESC"""

POSTGRES_THREAD_TYPES_SQL = """
WITH threads AS (
    SELECT DISTINCT thread_id FROM checkpoints
    WHERE {where}
    ORDER BY thread_id DESC
    LIMIT %(page)s
)
SELECT t.thread_id, '' AS checkpoint_ns, x.blob
FROM threads t
LEFT JOIN LATERAL (
    SELECT b.blob FROM checkpoint_blobs b
    WHERE b.thread_id = t.thread_id AND b.type = 'msgpack'
    UNION ALL
    SELECT w.blob FROM checkpoint_writes w
    WHERE w.thread_id = t.thread_id AND w.type = 'msgpack'
) x ON TRUE
ORDER BY t.thread_id DESC"""


_AFTER_HEAD = "(thread_id, checkpoint_ns) < (%(after_thread)s, %(after_ns)s)"


def postgres_types_query(
    after: tuple[str, str] | None, all_checkpoints: bool, page_size: int
) -> tuple[str, dict[str, Any]]:
    """One page of the inventory's rows (thread, namespace, blob) after the cursor."""
    params: dict[str, Any] = {"page": page_size}
    if all_checkpoints:
        where = "TRUE" if after is None else "thread_id < %(after_thread)s"
        sql = POSTGRES_THREAD_TYPES_SQL
    else:
        where = "TRUE" if after is None else _AFTER_HEAD
        sql = POSTGRES_HEAD_TYPES_SQL
    if after is not None:
        params.update(after_thread=after[0], after_ns=after[1])
    return sql.format(where=where), params


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


SQLITE_CHECKPOINT_TYPES_SQL = """
SELECT c.thread_id, c.checkpoint FROM checkpoints c
WHERE c.type = 'msgpack' AND c.thread_id IN ({marks}) AND {which}"""
SQLITE_WRITE_TYPES_SQL = """
SELECT c.thread_id, w.value FROM checkpoints c
JOIN writes w
    ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
    AND w.checkpoint_id = c.checkpoint_id
WHERE w.type = 'msgpack' AND c.thread_id IN ({marks}) AND {which}"""
SQLITE_HEAD_ONLY = """c.checkpoint_id = (
    SELECT max(checkpoint_id) FROM checkpoints h
    WHERE h.thread_id = c.thread_id AND h.checkpoint_ns = c.checkpoint_ns)"""
SQLITE_THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ? ORDER BY thread_id LIMIT ?"""
SQLITE_FIRST_THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id LIMIT ?"""


def sqlite_threads_query(after: str | None, page_size: int) -> tuple[str, tuple[Any, ...]]:
    """A page of thread ids after the cursor (the first page has none: "" is a thread)."""
    if after is None:
        return SQLITE_FIRST_THREADS_SQL, (page_size,)
    return SQLITE_THREADS_SQL, (after, page_size)


def sqlite_types_queries(threads: Sequence[str], all_checkpoints: bool) -> tuple[str, str]:
    """The checkpoint and write queries of a page of threads (the threads as parameters)."""
    which = "TRUE" if all_checkpoints else SQLITE_HEAD_ONLY
    marks = ", ".join("?" * len(threads))
    return (
        SQLITE_CHECKPOINT_TYPES_SQL.format(marks=marks, which=which),
        SQLITE_WRITE_TYPES_SQL.format(marks=marks, which=which),
    )


def sqlite_thread_blobs(threads: Sequence[str], rows: Sequence[Sequence[Any]]) -> ThreadBlobs:
    """Rows of (thread, blob) grouped by thread, every thread of the page listed."""
    grouped: dict[str, list[bytes]] = {str(thread_id): [] for thread_id in threads}
    for thread_id, blob in rows:
        if blob is not None:
            grouped[str(thread_id)].append(bytes(blob))
    return list(grouped.items())
