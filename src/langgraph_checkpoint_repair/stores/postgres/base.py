"""PostgreSQL fast path: the SQL and the pure logic shared by the sync and async stores.

Heads are read in keyset-paged queries over LangGraph's `checkpoints` table
(the latest checkpoint of each (thread, namespace), newest-first index order),
joined to only the message channels' blobs. Those blobs get a cheap first look
(`stores.plain`) when the saver uses LangGraph's default serializer, and the
saver's own serde otherwise; only heads that may be broken are loaded fully.

A repair is written in one transaction that first takes the thread's advisory
lock (`pg_try_advisory_xact_lock`, which no other run can take until the
transaction ends), looks at the head again, records the audit row and puts the
checkpoint, through a saver bound to that same connection. A run that finds
the lock taken, or the head already repaired, skips the thread as `claimed`.
Applications do not take the lock: their writes stay the head by the repair's
id (`ids.id_after`), and a repair that an application write overtook is found
after the commit and reported `superseded`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ...engine import repair_messages
from ..base import Head, RepairEntry, Selection
from ..plain import decode_plain, plain_history_is_clean
from ..plan import Assessment, NewCheckpoint

MIGRATION_LOCK = 7_284_001  # pg_advisory_xact_lock key serializing concurrent migrations
CLAIM_LOCK_CLASS = 7_284_002  # first key of a thread's (class, thread) repair lock
VERSION_TABLE_SQL = """
CREATE TABLE IF NOT EXISTS langgraph_repair_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)"""
LOCK_SQL = f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"
APPLIED_SQL = "SELECT version FROM langgraph_repair_migrations"
RECORD_MIGRATION_SQL = "INSERT INTO langgraph_repair_migrations (version, name) VALUES (%s, %s)"
GENTLE_SQL = (  # for this transaction only: give up quickly rather than queue behind live traffic
    "SELECT set_config('lock_timeout', '2s', true), set_config('statement_timeout', '30s', true)"
)

HEAD_ID_SQL = """
SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s"""
CLAIM_SQL = "SELECT pg_try_advisory_xact_lock(%s, %s)"
SIBLINGS_SQL = """
SELECT count(*) FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
    AND checkpoint_id > %(source)s AND parent_checkpoint_id = %(source)s
    AND checkpoint_id <> %(repair)s"""
BEGIN_RUN_SQL = """
INSERT INTO langgraph_repair_runs (run_id, command, arguments) VALUES (%s, %s, %s)
ON CONFLICT (run_id) DO NOTHING"""
RECORD_REPAIR_SQL = """
INSERT INTO langgraph_repair_threads
    (run_id, thread_id, checkpoint_ns, source_checkpoint_id, repair_checkpoint_id, actions)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING"""
FINISH_RUN_SQL = """
UPDATE langgraph_repair_runs SET finished_at = now(), summary = %s WHERE run_id = %s"""
REPAIRS_OF_SQL = """
SELECT thread_id, checkpoint_ns, source_checkpoint_id, repair_checkpoint_id
FROM langgraph_repair_threads WHERE run_id = %s ORDER BY thread_id, checkpoint_ns"""
RUN_EXISTS_SQL = "SELECT to_regclass('langgraph_repair_runs') IS NOT NULL"

_HEADS_SQL = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns)
        thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
    FROM checkpoints
    WHERE {where}
    ORDER BY thread_id DESC, checkpoint_ns DESC, checkpoint_id DESC
    LIMIT %(page)s
)
SELECT h.thread_id, h.checkpoint_ns, h.checkpoint_id, b.type, b.blob
FROM heads h
LEFT JOIN checkpoint_blobs b
    ON b.thread_id = h.thread_id
    AND b.checkpoint_ns = h.checkpoint_ns
    AND b.channel = ANY(%(channels)s)
    AND b.version = h.versions ->> b.channel
ORDER BY h.thread_id DESC, h.checkpoint_ns DESC"""


def heads_query(selection: Selection, after: tuple[str, str] | None) -> tuple[str, dict[str, Any]]:
    """One page of heads after the keyset cursor `after`, newest thread ids first."""
    where = ["TRUE"]
    params: dict[str, Any] = {"page": selection.page_size, "channels": list(selection.channels)}
    if after is not None:
        where.append("(thread_id, checkpoint_ns) < (%(after_thread)s, %(after_ns)s)")
        params.update(after_thread=after[0], after_ns=after[1])
    if selection.threads is not None:
        where.append("thread_id = ANY(%(threads)s)")
        params["threads"] = list(selection.threads)
    if selection.shard is not None:
        where.append("('x' || substr(md5(thread_id), 1, 7))::bit(28)::int %% %(n)s = %(k)s")
        params.update(k=selection.shard[0], n=selection.shard[1])
    return _HEADS_SQL.format(where=" AND ".join(where)), params


def heads_from_rows(rows: Sequence[Sequence[Any]], serde: SerializerProtocol) -> list[Head]:
    """Group the page's rows by head and give each head its first-look verdict."""
    plain_ok = isinstance(serde, JsonPlusSerializer)
    heads: dict[tuple[str, str, str], bool] = {}
    for thread_id, ns, checkpoint_id, type_, blob in rows:
        key = (thread_id, ns, checkpoint_id)
        clean = blob_is_clean(type_, blob, serde, plain_ok)
        heads[key] = heads.get(key, False) or not clean
    return [Head(t, ns, cid, maybe_broken) for (t, ns, cid), maybe_broken in heads.items()]


def blob_is_clean(
    type_: str | None, blob: bytes | None, serde: SerializerProtocol, plain_ok: bool
) -> bool:
    """True when the stored channel value certainly needs no repair."""
    if type_ is None or type_ in ("empty", "null") or blob is None:
        return True
    try:
        if plain_ok and type_ == "msgpack":
            return plain_history_is_clean(decode_plain(blob))
        value = serde.loads_typed((type_, bytes(blob)))
        return not isinstance(value, list) or not repair_messages(value).changed
    except Exception:  # undecodable here: let the full load decide
        return False


def claim_key(thread_id: str, checkpoint_ns: str) -> tuple[int, int]:
    """The two int4 keys of a (thread, namespace)'s repair lock: the same in every process."""
    digest = hashlib.md5(f"{thread_id}\0{checkpoint_ns}".encode()).digest()
    return CLAIM_LOCK_CLASS, int.from_bytes(digest[:4], "big", signed=True)


def repair_row(run_id: str, assessment: Assessment, new: NewCheckpoint) -> tuple[Any, ...]:
    actions = {name: [a.to_dict() for a in acts] for name, acts in assessment.actions.items()}
    return (
        run_id,
        assessment.thread_id,
        assessment.checkpoint_ns,
        assessment.checkpoint_id,
        new.checkpoint_id,
        json.dumps(actions),
    )


def entry_from_row(row: Sequence[Any]) -> RepairEntry:
    return RepairEntry(str(row[0]), str(row[1]), str(row[2]), str(row[3]))


def migrations() -> Iterator[tuple[int, str, str]]:
    """(version, file name, SQL) of every numbered migration file, in order."""
    for path in sorted(_migrations_folder().glob("*.sql")):
        version = int(path.name.split("_", 1)[0])
        yield version, path.name, path.read_text()


def _migrations_folder() -> Path:
    packaged = resources.files("langgraph_checkpoint_repair") / "_migrations" / "postgres"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[4] / "migrations" / "postgres"
