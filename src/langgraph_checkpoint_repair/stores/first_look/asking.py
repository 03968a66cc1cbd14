"""Heads waiting on a human, and their stale answers, read off the rows of
PostgreSQL's page of heads.

The page query already brings each head's pending writes and its other channels'
blobs; on a head's `__interrupt__` rows (when the run lists the waiting) and on its
null-task answer it also brings what `waiting.waiting_head` needs from the checkpoint
(its time, version, step and channel versions). So the threads waiting on a human are
listed, and a stale answer its own writes prove is found, without loading a head:
only their interrupts, answers and pending sends are decoded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ...codes import InterruptIds
from ...decoding.names import named_types
from ...in_flight import INTERRUPT_CHANNEL
from ...interrupt_ids import id_findings, marked_shared
from ...stale_answers import (
    NULL_TASK_ID,
    RESUME_CHANNEL,
    Write,
    is_null_answer,
    needs_child_writes,
    stale_answer,
)
from ...waiting import SENDS_CHANNEL, WaitingHead, waiting_head

HeadKey = tuple[str, str, str]


def waiting_heads(
    others: Sequence[Sequence[Any]], serde: SerializerProtocol
) -> dict[HeadKey, WaitingHead]:
    """The page's heads with an open interrupt, from its other rows (thread, namespace,
    checkpoint, channel, type, blob, task id, and on interrupt rows the head's fields:
    `stores.postgres.base.split_rows`). A value that does not decode leaves its head out: the
    full load of the integrity look reports it."""
    asked = {
        _key(row): row[7] for row in others if row[7] is not None and row[3] == INTERRUPT_CHANNEL
    }
    if not asked:
        return {}
    rows: dict[HeadKey, list[Sequence[Any]]] = {key: [] for key in asked}
    for row in others:
        held = rows.get(_key(row))
        if held is not None:
            held.append(row)
    found: dict[HeadKey, WaitingHead] = {}
    for key, fields in asked.items():
        try:
            tup = _as_tuple(key, fields, rows[key], serde)
            head = waiting_head(tup)
        except Exception:  # odd bytes: never a reason to fail the page
            continue
        if head is not None:
            found[key] = marked_shared(head, tup)
    return found


def _key(row: Sequence[Any]) -> HeadKey:
    """A row's head, as every look of the page keys it (text columns: strings)."""
    return (row[0], row[1], row[2])


def _as_tuple(
    key: HeadKey, fields: Any, rows: Sequence[Sequence[Any]], serde: SerializerProtocol
) -> CheckpointTuple:
    """As much of the head's tuple as `waiting_head` reads."""
    ts, version, step, versions = _fields(fields)
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
        elif channel == RESUME_CHANNEL and blob is not None:
            value = _answers(type_, bytes(blob), serde)
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


def _answers(type_: Any, blob: bytes, serde: SerializerProtocol) -> Any:
    """A task's answers, for how many it took (`interrupt_ids`); None where they do not
    decode here (counted as one)."""
    try:
        return serde.loads_typed((type_, blob))
    except Exception:  # an answer of a type not built here: its count alone is read
        return None


def stale_from_rows(
    others: Sequence[Sequence[Any]], answering: set[HeadKey], serde: SerializerProtocol
) -> dict[HeadKey, Any]:
    """Of the `answering` heads (`stored_values.answering_heads`), those whose own
    writes prove their null-task answer stale, each with the head's time (for
    `--min-idle`, brought on the answer's row): the run reports and plans them without
    loading them. A head whose subgraphs may have taken the answer, or whose answers
    are not plain data, is left to the full load."""
    if not answering:
        return {}
    writes: dict[HeadKey, list[Write]] = {key: [] for key in answering}
    times: dict[HeadKey, Any] = {}
    unplain: set[HeadKey] = set()
    for row in others:
        key = _key(row)
        if row[6] is None or key not in writes:
            continue
        write = _write_of(row, serde)
        if write is None:
            unplain.add(key)
            continue
        writes[key].append(write)
        if is_null_answer(write) and row[7] is not None:
            times[key] = _fields(row[7])[0]
    return {
        key: times.get(key)
        for key, found in writes.items()
        if key in times
        and key not in unplain
        and not needs_child_writes(found)
        and stale_answer(found) is not None
    }


def _write_of(row: Sequence[Any], serde: SerializerProtocol) -> Write | None:
    """A pending write as the stale rule reads it: answers decoded (None when one is
    not plain data, whose equality only the full load may judge), other values not."""
    channel, type_, blob, task_id = str(row[3]), row[4], row[5], str(row[6])
    if channel != RESUME_CHANNEL:
        return (task_id, channel, None)
    if type_ != "msgpack" or blob is None:
        return None
    try:
        if named_types(bytes(blob)):
            return None
        return (task_id, channel, serde.loads_typed((type_, bytes(blob))))
    except Exception:  # odd bytes: the full load reports them
        return None


def _fields(fields: Any) -> Any:
    """The head's fields as `ASKED_SQL` brings them (a JSON array)."""
    return json.loads(fields) if isinstance(fields, str) else fields


ONE_QUESTION = b"\x91"
"""How msgpack starts a list of one item: an `__interrupt__` write asking one question."""


def asking_again(others: Sequence[Sequence[Any]]) -> set[HeadKey]:
    """The page's heads whose interrupt ids may not tell questions apart, or differ
    between LangGraph releases (`interrupt_ids`): a task that asks after taking an answer
    (its `__interrupt__` row beside its own `__resume__` row), or asks more than one
    question in a write (or in bytes not read here). Only those heads are loaded for it."""
    asking: dict[HeadKey, set[str]] = {}
    answered: dict[HeadKey, set[str]] = {}
    found: set[HeadKey] = set()
    for row in others:
        channel, type_, blob, task_id = row[3], row[4], row[5], row[6]
        if task_id is None:
            continue
        if channel == INTERRUPT_CHANNEL:
            asking.setdefault(_key(row), set()).add(str(task_id))
            if not _one_question(type_, blob):
                found.add(_key(row))
        elif channel == RESUME_CHANNEL and task_id != NULL_TASK_ID:
            answered.setdefault(_key(row), set()).add(str(task_id))
    found.update(key for key, tasks in asking.items() if tasks & answered.get(key, set()))
    return found


def _one_question(type_: Any, blob: Any) -> bool:
    """Whether an `__interrupt__` row asks one question; LangGraph.js's JSON rows are
    never re-keyed (their ids are LangGraph.js's), so they count as one."""
    if type_ == "json":
        return True
    return type_ == "msgpack" and blob is not None and bytes(blob[:1]) == ONE_QUESTION


def ids_cleared(
    others: Sequence[Sequence[Any]],
    asking: set[HeadKey],
    serde: SerializerProtocol,
    scheme: InterruptIds | None,
) -> set[HeadKey]:
    """Of the `asking` heads (`asking_again`), those whose rows show no id finding under
    `scheme` (`interrupt_ids.id_findings`, on the head's fields that its `__interrupt__`
    row brings): they need no load for it. A head whose values do not decode here is
    left to the full load."""
    rows: dict[HeadKey, list[Sequence[Any]]] = {key: [] for key in asking}
    fields: dict[HeadKey, Any] = {}
    for row in others:
        held = rows.get(_key(row))
        if held is not None:
            held.append(row)
            if row[7] is not None:
                fields.setdefault(_key(row), row[7])
    cleared: set[HeadKey] = set()
    for key, found in fields.items():
        try:
            if not id_findings(_as_tuple(key, found, rows[key], serde), scheme):
                cleared.add(key)
        except Exception:  # odd bytes: the full load reports them
            continue
    return cleared
