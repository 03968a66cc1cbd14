"""Heads waiting on a human, read off the rows of PostgreSQL's page of heads.

The page query already brings each head's pending writes and its other channels'
blobs; on a head's `__interrupt__` rows it also brings what `waiting.waiting_head`
needs from the checkpoint (its time, version, step and channel versions). So the
threads waiting on a human are listed without loading one of them: only their
interrupts and pending sends are decoded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ...in_flight import INTERRUPT_CHANNEL
from ...waiting import SENDS_CHANNEL, WaitingHead, waiting_head

HeadKey = tuple[str, str, str]


def waiting_heads(
    others: Sequence[Sequence[Any]], serde: SerializerProtocol
) -> dict[HeadKey, WaitingHead]:
    """The page's heads with an open interrupt, from its other rows (thread, namespace,
    checkpoint, channel, type, blob, task id, and on interrupt rows the head's fields:
    `postgres.base.split_rows`). A value that does not decode leaves its head out: the
    full load of the integrity look reports it."""
    asked = {
        _key(row): row[7] for row in others if row[3] == INTERRUPT_CHANNEL and row[7] is not None
    }
    rows: dict[HeadKey, list[Sequence[Any]]] = {key: [] for key in asked}
    for row in others:
        if _key(row) in rows:
            rows[_key(row)].append(row)
    found: dict[HeadKey, WaitingHead] = {}
    for key, fields in asked.items():
        try:
            head = waiting_head(_as_tuple(key, fields, rows[key], serde))
        except Exception:  # odd bytes: never a reason to fail the page
            continue
        if head is not None:
            found[key] = head
    return found


def _key(row: Sequence[Any]) -> HeadKey:
    return (str(row[0]), str(row[1]), str(row[2]))


def _as_tuple(
    key: HeadKey, fields: Any, rows: Sequence[Sequence[Any]], serde: SerializerProtocol
) -> CheckpointTuple:
    """As much of the head's tuple as `waiting_head` reads."""
    ts, version, step, versions = json.loads(fields) if isinstance(fields, str) else fields
    values: dict[str, Any] = {}
    writes: list[tuple[str, str, Any]] = []
    for row in rows:
        channel, type_, blob, task_id = row[3], row[4], row[5], row[6]
        if task_id is None:
            if channel == SENDS_CHANNEL and blob is not None:
                values[channel] = serde.loads_typed((type_, bytes(blob)))
            continue
        value = None
        if channel == INTERRUPT_CHANNEL and blob is not None:
            value = serde.loads_typed((type_, bytes(blob)))
        writes.append((str(task_id), str(channel), value))
    thread_id, ns, checkpoint_id = key
    where = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
    checkpoint = {
        "id": checkpoint_id,
        "ts": ts,
        "v": version if isinstance(version, int) else 1,
        "channel_versions": versions or {},
        "channel_values": values,
    }
    metadata = {"step": step} if isinstance(step, int) else {}
    return CheckpointTuple({"configurable": where}, checkpoint, metadata, None, writes)  # type: ignore[arg-type]
