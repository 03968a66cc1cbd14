"""PostgreSQL fast path: the SQL and the pure row logic shared by the sync and async stores.

Heads are read in keyset-paged queries over LangGraph's `checkpoints` table
(the latest checkpoint of each (thread, namespace), newest-first index order),
joined to only the message channels' blobs. The rows go to the first look
(`stores.first_look.page`), which says which heads may be broken; only those are
loaded fully.

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
import logging
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ...codes import FindingCode
from ...decisions.plan import DETAIL_KEY, RUN_KEY, Assessment, NewCheckpoint
from ...delta.chains import MAX_CHAIN
from ...in_flight import INTERRUPT_CHANNEL
from ...stale_answers import NULL_TASK_ID, RESUME_CHANNEL
from ..base import RepairEntry, Selection
from .shards import ThreadRange, first_cursor

logger = logging.getLogger("langgraph_checkpoint_repair.batch")

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

HEAD_ID_SQL = """
SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s"""
ROW_TYPES_SQL = """
SELECT DISTINCT type FROM checkpoint_blobs WHERE thread_id = %(thread_id)s
    AND checkpoint_ns = %(checkpoint_ns)s AND type IS NOT NULL
UNION
SELECT DISTINCT type FROM checkpoint_writes WHERE thread_id = %(thread_id)s
    AND checkpoint_ns = %(checkpoint_ns)s AND type IS NOT NULL"""
"""The serializer types of one thread's rows (`formats`): read before writing on it."""
CLAIM_SQL = "SELECT pg_try_advisory_xact_lock(%s, %s)"
SCHEMA_SQL = """
SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = to_regclass('checkpoints')"""
"""The schema of the `checkpoints` table the session's search_path finds: part of
every repair lock's key (`claim_key`)."""
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
SELECT thread_id, checkpoint_ns, source_checkpoint_id, repair_checkpoint_id,
    actions ? '__graph__' AS moved_work
FROM langgraph_repair_threads WHERE run_id = %s ORDER BY thread_id, checkpoint_ns"""
PROBE_SQL = "SELECT 1 FROM checkpoints LIMIT 1"
RUN_EXISTS_SQL = "SELECT to_regclass('langgraph_repair_runs') IS NOT NULL"

# The page's blobs are looked up head by head on checkpoint_blobs' primary key (OFFSET 0
# keeps the planner from joining them in one pass, which on a small or young table is a
# sequential scan of every blob for each page: the whole table read once per page).
# Besides the selected (message) channels, each head's other stored values come along
# for the integrity look (`stored_values.suspect_heads`): its other channels' blobs at
# their versions, and its pending writes (`task_id` set), each on its table's key. A
# null-task answer's row, and an `__interrupt__` row, also brings the head's own fields
# (`ASKED_SQL`; `first_look.asking`), looked up for those rows alone.
_HEADS_SQL = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns)
        thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions,
        metadata -> 'counters_since_delta_snapshot' AS counters,
        checkpoint -> 'channel_values' AS inline,
        CASE WHEN %(graph)s THEN NULLIF(ARRAY(
            SELECT name FROM jsonb_object_keys(checkpoint -> 'channel_versions') AS name
            WHERE name <> ALL(%(graph_channels)s::text[])
        ), '{{}}') END AS unknown
    FROM checkpoints
    WHERE {where}
    ORDER BY thread_id DESC, checkpoint_ns DESC, checkpoint_id DESC
    LIMIT %(page)s
)
SELECT h.thread_id, h.checkpoint_ns, h.checkpoint_id, b.type, b.blob, b.channel,
    ARRAY(
        SELECT name FROM unnest(%(channels)s::text[]) AS name
        WHERE h.versions ? name AND h.counters ? name
    ) AS counted,
    b.task_id, b.selected, b.asked, b.idx, h.unknown,
    ARRAY(
        SELECT name FROM unnest(%(channels)s::text[]) AS name
        WHERE h.versions ? name AND NOT coalesce(h.counters ? name, FALSE)
            AND NOT coalesce(h.inline ? name, FALSE)
    ) AS blobbed
FROM heads h
LEFT JOIN LATERAL (
    SELECT b.type, b.blob, b.channel, NULL::text AS task_id, TRUE AS selected,
        NULL::jsonb AS asked, NULL::integer AS idx
    FROM checkpoint_blobs b
    WHERE b.thread_id = h.thread_id
        AND b.checkpoint_ns = h.checkpoint_ns
        AND b.channel = ANY(%(channels)s)
        AND b.version = h.versions ->> b.channel
    UNION ALL
    SELECT o.type, o.blob, o.channel, NULL, FALSE, NULL, NULL
    FROM jsonb_each_text(h.versions) AS v (channel, version)
    JOIN checkpoint_blobs o
        ON o.thread_id = h.thread_id AND o.checkpoint_ns = h.checkpoint_ns
        AND o.channel = v.channel AND o.version = v.version
    WHERE v.channel <> ALL(%(channels)s) AND o.type NOT IN ('empty', 'null', 'bytes', 'bytearray')
    UNION ALL
    SELECT w.type, w.blob, w.channel, w.task_id, FALSE, {asked}, w.idx
    FROM checkpoint_writes w
    WHERE w.thread_id = h.thread_id AND w.checkpoint_ns = h.checkpoint_ns
        AND w.checkpoint_id = h.checkpoint_id
    OFFSET 0
) b ON TRUE
ORDER BY h.thread_id DESC, h.checkpoint_ns DESC"""


ASKED_SQL = """CASE WHEN {rows} THEN (
        SELECT jsonb_build_array(c.checkpoint -> 'ts', c.checkpoint -> 'v',
            c.metadata -> 'step', c.checkpoint -> 'channel_versions')
        FROM checkpoints c
        WHERE c.thread_id = h.thread_id AND c.checkpoint_ns = h.checkpoint_ns
            AND c.checkpoint_id = h.checkpoint_id) END"""
"""On a head's null-task answer and `__interrupt__` rows: its time, version, step and
channel versions."""
ANSWER_ROW = f"(w.channel = '{RESUME_CHANNEL}' AND w.task_id = '{NULL_TASK_ID}')"
ASKING_ROW = f"w.channel = '{INTERRUPT_CHANNEL}'"
HeadKey = tuple[str, str, str]
BLOBBED = 12
"""Position in a heads query row: the selected channels the head names in a blob."""


def blobs_missing(rows: Sequence[Sequence[Any]]) -> dict[HeadKey, list[tuple[FindingCode, str]]]:
    """`blob_missing` for each selected channel a head names at a version whose blob
    row is gone: LangGraph's saver writes a row for every version (`empty` for no
    value), so a missing one was deleted, and the channel loads empty."""
    named: dict[HeadKey, set[str]] = {}
    stored: dict[HeadKey, set[str]] = {}
    for row in rows:
        key = (row[0], row[1], row[2])
        named.setdefault(key, set()).update(row[BLOBBED] or ())
        if row[8] is True:  # a selected channel's blob
            stored.setdefault(key, set()).add(row[5])
    missing = {key: sorted(names - stored.get(key, set())) for key, names in named.items()}
    return {
        key: [("blob_missing", name) for name in names] for key, names in missing.items() if names
    }


def split_rows(
    rows: Sequence[Sequence[Any]],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The heads query's rows as the first look's (a head's selected channels; a head's
    other values leave an empty row, so every head is still there) and the integrity
    look's (thread, namespace, checkpoint, channel, type, blob, task id, the head's
    fields on a null-task answer's and an `__interrupt__` row (`ASKED_SQL`), and a
    pending write's index)."""
    looked: list[tuple[Any, ...]] = []
    others: list[tuple[Any, ...]] = []
    for row in rows:
        thread_id, ns, checkpoint_id, type_, blob, channel, counted, task_id, selected = row[:9]
        if selected is False:
            others.append(
                (thread_id, ns, checkpoint_id, channel, type_, blob, task_id, row[9], row[10])
            )
            looked.append((thread_id, ns, checkpoint_id, None, None, None, counted))
        else:
            looked.append((thread_id, ns, checkpoint_id, type_, blob, channel, counted))
    return looked, others


# A delta channel stores nothing at most heads: the ancestors' writes since the nearest
# stored value rebuild it. This walks the parent chains of a page's delta heads at once,
# stopping each at its seed, and returns the writes ('w') and seeds ('s') on the way.
# Stored rows can say anything: a parent is followed only while it is older than its child
# (every cycle breaks that order) and for at most MAX_CHAIN steps; a walk stopped by either
# comes back as an 'x' row, and its head is loaded in full (where the guard reports it).
# A walk that ends with no seed where rows were deleted (a parent named and gone, or none
# named on a checkpoint past the thread's first step) comes back as a 'c' row: LangGraph
# rebuilds that channel from nothing (`retention.keep.cut_channels` says the same).
_SEEDED = """(
    c.checkpoint -> 'channel_values' ? %(channel)s
    OR EXISTS (
        SELECT 1 FROM checkpoint_blobs s
        WHERE s.thread_id = c.thread_id AND s.checkpoint_ns = c.checkpoint_ns
        AND s.channel = %(channel)s AND s.type <> 'empty'
        AND s.version = c.checkpoint -> 'channel_versions' ->> %(channel)s
    )
)"""
DELTA_WALK_SQL = f"""
WITH RECURSIVE walk (thread_id, checkpoint_ns, head_id, ancestor, depth, seeded, parent) AS (
    SELECT hc.thread_id, hc.checkpoint_ns, h.head_id, hc.checkpoint_id, 0, FALSE,
        hc.parent_checkpoint_id
    FROM unnest(%(threads)s::text[], %(namespaces)s::text[], %(heads)s::text[])
        AS h (thread_id, checkpoint_ns, head_id)
    JOIN checkpoints hc
        ON hc.thread_id = h.thread_id AND hc.checkpoint_ns = h.checkpoint_ns
        AND hc.checkpoint_id = h.head_id
    UNION ALL
    SELECT c.thread_id, c.checkpoint_ns, w.head_id, c.checkpoint_id, w.depth + 1, {_SEEDED},
        c.parent_checkpoint_id
    FROM walk w
    JOIN checkpoints c
        ON c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
        AND c.checkpoint_id = w.parent AND c.checkpoint_id < w.ancestor
    WHERE NOT w.seeded AND w.depth < %(limit)s
)
SELECT 'w', w.thread_id, w.checkpoint_ns, w.head_id, w.depth,
    x.task_path, x.task_id, x.idx, x.type, x.blob
FROM walk w
JOIN checkpoint_writes x
    ON x.thread_id = w.thread_id AND x.checkpoint_ns = w.checkpoint_ns
    AND x.checkpoint_id = w.ancestor AND x.channel = %(channel)s
WHERE w.depth > 0
UNION ALL
SELECT 's', w.thread_id, w.checkpoint_ns, w.head_id, w.depth, NULL, NULL, NULL, b.type, b.blob
FROM walk w
JOIN checkpoints c
    ON c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
    AND c.checkpoint_id = w.ancestor
LEFT JOIN checkpoint_blobs b
    ON b.thread_id = w.thread_id AND b.checkpoint_ns = w.checkpoint_ns
    AND b.channel = %(channel)s AND b.type <> 'empty'
    AND b.version = c.checkpoint -> 'channel_versions' ->> %(channel)s
WHERE w.seeded
UNION ALL
SELECT 'x', w.thread_id, w.checkpoint_ns, w.head_id, w.depth, NULL, NULL, NULL, NULL, NULL
FROM walk w
WHERE NOT w.seeded AND w.parent IS NOT NULL
    AND (w.parent >= w.ancestor OR w.depth >= %(limit)s)
UNION ALL
SELECT 'c', w.thread_id, w.checkpoint_ns, w.head_id, w.depth, NULL, NULL, NULL, NULL, NULL
FROM walk w
JOIN checkpoints c
    ON c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
    AND c.checkpoint_id = w.ancestor
WHERE NOT w.seeded AND w.depth < %(limit)s AND CASE
    WHEN w.parent IS NULL THEN jsonb_typeof(c.metadata -> 'step') = 'number'
        AND (c.metadata ->> 'step')::numeric >= 0
    ELSE w.parent < w.ancestor AND NOT EXISTS (
        SELECT 1 FROM checkpoints p
        WHERE p.thread_id = w.thread_id AND p.checkpoint_ns = w.checkpoint_ns
        AND p.checkpoint_id = w.parent)
    END"""
DELTA_WALK_SQL_JS = DELTA_WALK_SQL.replace("x.task_path,", "''::text,")


COUNT_SQL = """
SELECT count(*) FROM (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints WHERE {where}) h"""


def heads_query(
    selection: Selection, after: tuple[str, str] | None, within: ThreadRange | None = None
) -> tuple[str, dict[str, Any]]:
    """One page of heads after the keyset cursor `after`, newest thread ids first, of
    the thread ids `within` (a shard's range, `shards`: its first cursor is the range's
    `start`)."""
    where, params = keyset_where(selection, after, within)
    params.update(page=selection.page_size, channels=list(selection.channels))
    graph_channels = selection.graph_channels
    params.update(graph=graph_channels is not None, graph_channels=sorted(graph_channels or ()))
    asked = ASKED_SQL.format(rows=f"{ASKING_ROW} OR {ANSWER_ROW}")
    return _HEADS_SQL.format(where=where, asked=asked), params


def count_query(
    selection: Selection, within: ThreadRange | None = None
) -> tuple[str, dict[str, Any]]:
    """How many heads a run over `selection` looks at: one query, for a progress total."""
    where, params = keyset_where(selection, first_cursor(within), within)
    return COUNT_SQL.format(where=where), params


def keyset_where(
    selection: Selection, after: tuple[str, str] | None, within: ThreadRange | None
) -> tuple[str, dict[str, Any]]:
    where = ["TRUE"]
    params: dict[str, Any] = {}
    if after is not None:
        where.append("(thread_id, checkpoint_ns) < (%(after_thread)s, %(after_ns)s)")
        params.update(after_thread=after[0], after_ns=after[1])
    if selection.threads is not None:
        where.append("thread_id = ANY(%(threads)s)")
        params["threads"] = list(selection.threads)
    if within is not None:
        conditions, bounds = within.where()
        where += conditions
        params.update(bounds)
    return " AND ".join(where), params


def claim_key(thread_id: str, checkpoint_ns: str, schema: str) -> tuple[int, int]:
    """The two int4 keys of a (thread, namespace)'s repair lock: the same in every process,
    and another for the same thread id in the tables of another `schema` (`SCHEMA_SQL`),
    since an advisory lock is the database's, whatever schema a run reads."""
    digest = hashlib.md5(f"{schema}\0{thread_id}\0{checkpoint_ns}".encode()).digest()
    return CLAIM_LOCK_CLASS, int.from_bytes(digest[:4], "big", signed=True)


def delta_walk_query(
    channel: str, keys: Sequence[HeadKey], js_only: bool = False
) -> tuple[str, dict[str, Any]]:
    """The walk of `channel` from each head of `keys`; `js_only`: over LangGraph.js's
    tables alone, whose writes have no `task_path` (each write's is empty, as
    LangGraph.js sorts writes by task and index alone)."""
    threads, namespaces, heads = (list(column) for column in zip(*keys, strict=True))
    params = {
        "channel": channel,
        "threads": threads,
        "namespaces": namespaces,
        "heads": heads,
        "limit": MAX_CHAIN,
    }
    return (DELTA_WALK_SQL_JS if js_only else DELTA_WALK_SQL), params


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


def rewrote_in_place(row: Sequence[Any]) -> bool:
    """Whether a row of `REPAIRS_OF_SQL` records writes rewritten in place (its source
    and repair are the same checkpoint) rather than a repair checkpoint."""
    return bool(row[2] == row[3])


def entry_from_row(row: Sequence[Any]) -> RepairEntry:
    return RepairEntry(str(row[0]), str(row[1]), str(row[2]), str(row[3]), bool(row[4]))


def migrations() -> Iterator[tuple[int, str, str]]:
    """(version, file name, SQL) of every numbered migration file, in order."""
    for path in sorted(_migrations_folder().glob("*.sql")):
        version = int(path.name.split("_", 1)[0])
        yield version, path.name, path.read_text()


def known_versions() -> set[int]:
    """The version of every migration this release ships."""
    return {version for version, _, _ in migrations()}


def _migrations_folder() -> Path:
    packaged = resources.files("langgraph_checkpoint_repair") / "_migrations" / "postgres"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[4] / "migrations" / "postgres"


# The rows a rewind reads and writes (`decisions.rewind`): a rewind walks parent ids from
# columns, never decoding a row that may not decode; its undo copies the unreadable
# head's row as stored, under a new id.
RUNG_SQL = """
SELECT checkpoint_id, parent_checkpoint_id,
    CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ->> 'step' END
FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
    AND checkpoint_id = %(checkpoint_id)s"""
# The copy keeps every stored byte but the ids: the checkpoint's own "id" follows its
# row's (JSONB edits need no decoding), and the metadata gains the undo's record where
# it is a JSON object.
COPY_SQL = f"""
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT thread_id, checkpoint_ns, %(new)s, %(parent)s, type,
    CASE WHEN jsonb_typeof(checkpoint) = 'object'
        THEN jsonb_set(checkpoint, '{{id}}', to_jsonb(%(new)s::text)) ELSE checkpoint END,
    CASE WHEN jsonb_typeof(metadata) = 'object'
        THEN metadata || jsonb_build_object(
            '{RUN_KEY}', %(record)s::jsonb -> '{RUN_KEY}',
            '{DETAIL_KEY}', %(record)s::jsonb -> '{DETAIL_KEY}')
        ELSE metadata END
FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
    AND checkpoint_id = %(source)s"""


# How long the command's sessions wait for a lock or run a statement: never unbounded,
# and never longer than the operator allows.
TIMEOUTS_SQL = """
SELECT set_config(ours.name,
    CASE WHEN current_setting(ours.name)::interval > interval '0'
        AND current_setting(ours.name)::interval <= ours.ms * interval '1 ms'
    THEN current_setting(ours.name) ELSE ours.ms::text END,
    {local})
FROM (VALUES ('lock_timeout', {lock_ms}), ('statement_timeout', {statement_ms}))
    AS ours (name, ms)"""
"""Cheap to run (no catalog view): on a role whose own limit is a few milliseconds it
must itself finish in time."""


def timeouts_sql(lock_ms: int, statement_ms: int, *, local: bool) -> str:
    """Set `lock_timeout` and `statement_timeout` to ours, unless the session's own is
    lower (set for the role, the database or in the URI's `options`): an operator's
    tighter limit wins over the command's; `local`: for this transaction only."""
    local_sql = "true" if local else "false"
    return TIMEOUTS_SQL.format(lock_ms=lock_ms, statement_ms=statement_ms, local=local_sql)


GENTLE_SQL = timeouts_sql(2_000, 30_000, local=True)
"""For a write's transaction: give up quickly rather than queue behind live traffic."""
SESSION_TIMEOUTS_SQL = timeouts_sql(2_000, 60_000, local=False)
"""For every session the command opens: no statement waits or runs unbounded."""
