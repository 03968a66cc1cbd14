"""SQLite (the embedded default): the SQL and the pure row logic its sync and async
stores share (`sync`, `aio`). Heads are found by SQL, everything else goes through the
saver.

A repair is written inside one `BEGIN IMMEDIATE` transaction on the saver's own
connection: the head is looked at again and the saver's `put` inserts the
repair before the transaction ends, while SQLite keeps every other writer out,
in this process or any other. Two runs cannot both repair a head, and no
application write can land between the last look and the repair. The
transaction is opened under the saver's lock and the saver's `put` (which takes
that lock itself) commits it; a lock kept per saver object keeps every other
run sharing that saver (so its connection) from opening a second transaction
on it meanwhile, and a head claimed by such a run is skipped (`claims`).
Undo checkpoints, and the row copies that undo a rewind, are written the same way.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from ...codes import FindingCode
from ...decisions.plan import DETAIL_KEY, RUN_KEY
from ...js.values import JsJsonPlusSerializer
from ...retention.keep import cut_channels
from ..base import Head, Selection
from ..first_look.plain import js_checkpoint_verdict
from .prune_sql import stored_checkpoint

BEGIN_SQL = "BEGIN IMMEDIATE"
"""A write transaction from its first statement: SQLite keeps every other writer out."""
COMMIT_SQL = "COMMIT"
ROLLBACK_SQL = "ROLLBACK"

_HEADS_SQL = """
SELECT h.thread_id, h.checkpoint_ns, h.checkpoint_id,
    CASE WHEN c.type = 'json' THEN c.checkpoint END,
    EXISTS (SELECT 1 FROM writes w WHERE w.thread_id = h.thread_id
        AND w.checkpoint_ns = h.checkpoint_ns AND w.checkpoint_id = h.checkpoint_id),
    CASE WHEN json_valid(CAST(c.metadata AS TEXT)) THEN json_extract(CAST(c.metadata AS TEXT),
        '$.counters_since_delta_snapshot') IS NOT NULL ELSE 0 END
FROM (
    SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id
    FROM checkpoints
    {where}
    GROUP BY thread_id, checkpoint_ns
    ORDER BY thread_id, checkpoint_ns
    LIMIT ?
) AS h
JOIN checkpoints c ON c.thread_id = h.thread_id AND c.checkpoint_ns = h.checkpoint_ns
    AND c.checkpoint_id = h.checkpoint_id
ORDER BY h.thread_id, h.checkpoint_ns
"""
"""A page of heads, each with its row's JSON where it is LangGraph.js's (`json`, values
inline) and whether it has pending writes: what the first look of such a head reads; and
whether it counts updates since a delta channel's snapshot (`delta_heads`)."""
FIRST_HEADS_SQL = _HEADS_SQL.format(where="")
NEXT_HEADS_SQL = _HEADS_SQL.format(where="WHERE (thread_id, checkpoint_ns) > (?, ?)")
HEAD_ID_SQL = "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
ROW_TYPES_SQL = """
SELECT DISTINCT type FROM checkpoints WHERE thread_id = :thread_id AND checkpoint_ns = :ns
UNION
SELECT DISTINCT type FROM writes WHERE thread_id = :thread_id AND checkpoint_ns = :ns"""
"""The serializer types of one thread's rows (`formats`): read before writing on it."""
SIBLINGS_SQL = """
SELECT count(*) FROM checkpoints
WHERE thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns AND checkpoint_id > :source
    AND parent_checkpoint_id = :source AND checkpoint_id <> :repair"""

TYPES_PAGE = 500
"""Threads per page of the `types` inventory (each is a bound parameter: SQLite's
oldest builds take 999 at most)."""
THREADS_SQL = "SELECT thread_id FROM checkpoints GROUP BY thread_id, checkpoint_ns"


def counted(rows: list[Any], selection: Selection) -> int:
    return sum(1 for (thread_id,) in rows if selection.takes(str(thread_id)))


def selected_heads(
    rows: list[Any],
    selection: Selection,
    serde: Any,
    lost: Mapping[tuple[str, str], tuple[tuple[FindingCode, str], ...]] = {},
) -> list[Head]:
    """The page's heads, each LangGraph.js head with its first look's verdict
    (`plain.js_checkpoint_verdict`); every other head is loaded. A head without
    pending writes asks no question (`Head.asks_again`). `lost` holds, by
    (thread, namespace), the channels whose history is gone (`seeds_missing`)."""
    looks = selection.token_budget is None and isinstance(serde, JsJsonPlusSerializer)
    channels = list(selection.channels)
    heads = []
    for thread_id, ns, checkpoint_id, js_row, written, _ in rows:
        if not selection.takes(str(thread_id)):
            continue
        head = Head(str(thread_id), str(ns), str(checkpoint_id), asks_again=bool(written))
        head = replace(head, history_lost=lost.get((str(thread_id), str(ns)), ()))
        if looks and js_row is not None and not written:
            clean, found = js_checkpoint_verdict(bytes(js_row), channels)
            head = replace(head, maybe_broken=not clean, channels=found)
        heads.append(head)
    return heads


def delta_heads(rows: list[Any], selection: Selection) -> list[tuple[str, str]]:
    """(thread, namespace) of the page's selected heads that keep a delta channel: whose
    chain `seeds_missing` then reads."""
    return [(str(row[0]), str(row[1])) for row in rows if row[5] and selection.takes(str(row[0]))]


NAMESPACE_SQL = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"""
"""Every checkpoint of one (thread, namespace), as `seeds_missing` reads them."""


def seeds_missing(
    rows: list[Any], serde: SerializerProtocol, channels: Sequence[str]
) -> tuple[tuple[FindingCode, str], ...]:
    """`delta_seed_missing` for each selected delta channel whose walk from the head ends
    where rows were deleted (`retention.keep.cut_channels`); none for rows that do not
    decode (the head's load reports those)."""
    try:
        checkpoints = [stored_checkpoint(row, set(), serde) for row in rows]
    except Exception:
        return ()
    if not checkpoints:
        return ()
    cut = cut_channels({row.checkpoint_id: row for row in checkpoints})
    return tuple(("delta_seed_missing", name) for name in channels if name in cut)


def heads_query(after: tuple[str, str] | None, page_size: int) -> tuple[str, tuple[Any, ...]]:
    """One page of heads after the keyset cursor; the first page has no cursor, so the
    empty thread id (which no cursor sorts before) is a thread like any other."""
    if after is None:
        return FIRST_HEADS_SQL, (page_size,)
    return NEXT_HEADS_SQL, (*after, page_size)


def thread_params(thread_id: str, checkpoint_ns: str) -> dict[str, str]:
    return {"thread_id": thread_id, "ns": checkpoint_ns}


def row_types_of(rows: list[Any]) -> frozenset[str]:
    return frozenset(str(row[0]) for row in rows if row[0] is not None)


_writing: weakref.WeakKeyDictionary[object, threading.Lock] = weakref.WeakKeyDictionary()
_awriting: weakref.WeakKeyDictionary[object, asyncio.Lock] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def writing_lock(saver: object) -> threading.Lock:
    """One write transaction at a time on a saver's connection, whichever run opens it."""
    with _guard:
        return _writing.setdefault(saver, threading.Lock())


def awriting_lock(saver: object) -> asyncio.Lock:
    with _guard:
        return _awriting.setdefault(saver, asyncio.Lock())


RUNG_SQL = """
SELECT checkpoint_id, parent_checkpoint_id,
    CASE WHEN json_valid(CAST(metadata AS TEXT))
        AND json_type(CAST(metadata AS TEXT)) = 'object'
    THEN json_extract(CAST(metadata AS TEXT), '$.step') END
FROM checkpoints
WHERE thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
    AND checkpoint_id = :checkpoint_id"""
"""One rung of a rewind (`decisions.rewind`): a checkpoint's parent and step, read from
columns, never decoding a row that may not decode."""

# The copy that undoes a rewind keeps every stored byte but the ids (the checkpoint blob
# is copied as it is); the metadata gains the undo's record where it is a JSON object.
COPY_SQL = f"""
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT thread_id, checkpoint_ns, :new, :parent, type, checkpoint,
    CASE WHEN json_valid(CAST(metadata AS TEXT))
        AND json_type(CAST(metadata AS TEXT)) = 'object'
    THEN CAST(json_set(CAST(metadata AS TEXT),
        '$.{RUN_KEY}', json_extract(:record, '$.{RUN_KEY}'),
        '$.{DETAIL_KEY}', json_extract(:record, '$.{DETAIL_KEY}')) AS BLOB)
    ELSE metadata END
FROM checkpoints
WHERE thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns AND checkpoint_id = :source"""
