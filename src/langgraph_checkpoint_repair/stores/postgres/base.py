"""PostgreSQL fast path: the SQL and the pure logic shared by the sync and async stores.

Heads are read in keyset-paged queries over LangGraph's `checkpoints` table
(the latest checkpoint of each (thread, namespace), newest-first index order),
joined to only the message channels' blobs. Those blobs get a cheap first look
(`stores.first_look.plain`) when the saver uses LangGraph's default serializer, and the
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

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ...compatibility import features
from ...decisions.plan import Assessment, NewCheckpoint
from ...decoding.integrity import StoredValue, trust_of
from ...delta import rebuild_messages, snapshot_value
from ...delta.chains import MAX_CHAIN
from ...engine import repair_messages
from ...engine.context import count_tokens
from ...in_flight import INTERRUPT_CHANNEL
from ...js.values import JsJsonPlusSerializer
from ...stale_answers import NULL_TASK_ID, RESUME_CHANNEL
from ...waiting import WaitingHead
from .. import stored_values as values
from ..base import Head, RepairEntry, Selection
from ..faults import store_lost
from ..first_look.plain import (
    HISTORIES,
    JS_HISTORIES,
    WALKS,
    js_verdicts,
    pack_walk,
    plain_blob_is_clean,
    plain_verdicts,
    walk_verdicts,
)
from .asking import stale_from_rows, waiting_heads
from .drifting import may_drift
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
# null-task answer's row, and when a run lists the heads waiting on a human an
# `__interrupt__` row, also brings the head's own fields (`ASKED_SQL`; `asking`), looked
# up for those rows alone.
_HEADS_SQL = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns)
        thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions,
        metadata -> 'counters_since_delta_snapshot' AS counters,
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
    b.task_id, b.selected, b.asked, b.idx, h.unknown
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
"""On a head's null-task answer (and `__interrupt__` rows, when the run lists the
waiting): its time, version, step and channel versions."""
ANSWER_ROW = f"(w.channel = '{RESUME_CHANNEL}' AND w.task_id = '{NULL_TASK_ID}')"
ASKING_ROW = f"w.channel = '{INTERRUPT_CHANNEL}'"


def split_rows(
    rows: Sequence[Sequence[Any]],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The heads query's rows as the first look's (a head's selected channels; a head's
    other values leave an empty row, so every head is still there) and the integrity
    look's (thread, namespace, checkpoint, channel, type, blob, task id, the head's
    fields on a null-task answer's row and, when a run lists the waiting, on an
    `__interrupt__` row (`ASKED_SQL`), and a pending write's index)."""
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
    AND (w.parent >= w.ancestor OR w.depth >= %(limit)s)"""

HeadKey = tuple[str, str, str]


@dataclass
class PageVerdicts:
    """A page of heads: whether each may be broken, and the delta channels still to walk."""

    maybe_broken: dict[HeadKey, bool] = field(default_factory=dict)
    to_walk: dict[str, list[HeadKey]] = field(default_factory=dict)
    found: dict[HeadKey, set[str]] = field(default_factory=dict)
    """The selected channels each head holds: stored there, or a delta channel's history."""
    waiting: dict[HeadKey, WaitingHead] = field(default_factory=dict)
    answering: dict[HeadKey, tuple[StoredValue, ...]] = field(default_factory=dict)
    stale: dict[HeadKey, Any] = field(default_factory=dict)
    drifting: set[HeadKey] | None = None

    def heads(self) -> list[Head]:
        return [
            Head(
                *key,
                maybe_broken=broken,
                channels=frozenset(self.found[key]),
                waiting=self.waiting.get(key),
                writes=self.answering.get(key),
                stale_since=self.stale.get(key),
                may_drift=may_drift(key, self.drifting),
            )
            for key, broken in self.maybe_broken.items()
        ]


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
    rows = f"{ASKING_ROW} OR {ANSWER_ROW}" if selection.waiting else ANSWER_ROW
    return _HEADS_SQL.format(where=where, asked=ASKED_SQL.format(rows=rows)), params


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


def plain_look(serde: SerializerProtocol) -> bool:
    """Whether blobs this serde wrote get the plain first look (LangGraph's default
    serializer, strict or not); others are decoded with the serde itself."""
    return isinstance(serde, JsonPlusSerializer)


PlainJudge = Callable[[list[bytes]], bytes]
"""Verdicts of many msgpack blobs at once, a byte each (`plain.plain_verdicts`)."""


def plain_rows(rows: Sequence[Sequence[Any]], serde: SerializerProtocol) -> list[int]:
    """The page's rows whose blob gets the plain first look, by position."""
    if not plain_look(serde):
        return []
    return [n for n, row in enumerate(rows) if row[3] == "msgpack" and row[4]]


def plain_blobs(rows: Sequence[Sequence[Any]], serde: SerializerProtocol) -> list[bytes]:
    """The blobs of `plain_rows`, in the same order."""
    return _blobs_at(rows, plain_rows(rows, serde))


def js_rows(
    rows: Sequence[Sequence[Any]], serde: SerializerProtocol, budget: int | None
) -> list[int]:
    """The page's rows whose blob gets LangGraph.js's first look, by position: `json`
    blobs a LangGraph.js-aware serde reads, with no budget (under one they are loaded)."""
    if budget is not None or not isinstance(serde, JsJsonPlusSerializer):
        return []
    return [n for n, row in enumerate(rows) if row[3] == "json" and row[4]]


def _blobs_at(rows: Sequence[Sequence[Any]], positions: list[int]) -> list[bytes]:
    return [bytes(rows[n][4]) for n in positions]


def heads_from_rows(
    rows: Sequence[Sequence[Any]],
    serde: SerializerProtocol,
    judges: tuple[PlainJudge | None, PlainJudge | None] = (None, None),
    budget: int | None = None,
) -> PageVerdicts:
    """Group the page's rows by head and give each head its first-look verdict (clean,
    and within the token `budget` if given); a delta channel with nothing stored at its
    head is left to walk (`delta_walk_query`). The `plain_blobs`, then the `js_rows`'
    blobs, are judged together by `judges` (a helper may be judging them under the same
    budget), or here."""
    plain_ok = plain_look(serde)
    plain, js = plain_rows(rows, serde), js_rows(rows, serde, budget)
    judge_plain, judge_js = judges
    judge = judge_plain or functools.partial(plain_verdicts, budget=budget)
    verdicts = dict(zip(plain, judge(_blobs_at(rows, plain)), strict=True))
    judge = judge_js or functools.partial(js_verdicts, budget=budget)
    verdicts.update(zip(js, judge(_blobs_at(rows, js)), strict=True))
    page = PageVerdicts()
    counted: dict[HeadKey, list[str]] = {}
    for n, (thread_id, ns, checkpoint_id, type_, blob, channel, counted_here) in enumerate(rows):
        key = (thread_id, ns, checkpoint_id)
        clean = verdicts.get(n)
        if clean is None:
            clean = blob_is_clean(type_, blob, serde, plain_ok, budget)
        page.maybe_broken[key] = page.maybe_broken.get(key, False) or not clean
        page.found.setdefault(key, set()).update([channel] if channel is not None else [])
        counted[key] = list(counted_here or ())
    for key, names in counted.items():
        for name in names:
            if name not in page.found[key]:
                page.to_walk.setdefault(name, []).append(key)
            page.found[key].add(name)
    return page


def blob_is_clean(
    type_: str | None,
    blob: bytes | None,
    serde: SerializerProtocol,
    plain_ok: bool,
    budget: int | None = None,
) -> bool:
    """True when the stored channel value certainly needs no repair (and, with a token
    `budget`, certainly fits in it)."""
    if type_ is None or type_ in ("empty", "null") or blob is None:
        return True
    try:
        if plain_ok and type_ == "msgpack":
            return plain_blob_is_clean(bytes(blob), budget)
        value = snapshot_value(serde.loads_typed((type_, bytes(blob))))
        return not isinstance(value, list) or loaded_is_clean(value, budget)
    except Exception:  # undecodable here: let the full load decide
        return False


def loaded_is_clean(value: list[Any], budget: int | None) -> bool:
    """A history the serde built needs no repair and, with a `budget`, fits in it as
    LangChain's approximation counts it (what the engine counts with no other counter)."""
    if repair_messages(value).changed:
        return False
    return budget is None or count_tokens(value, None) <= budget


def claim_key(thread_id: str, checkpoint_ns: str, schema: str) -> tuple[int, int]:
    """The two int4 keys of a (thread, namespace)'s repair lock: the same in every process,
    and another for the same thread id in the tables of another `schema` (`SCHEMA_SQL`),
    since an advisory lock is the database's, whatever schema a run reads."""
    digest = hashlib.md5(f"{schema}\0{thread_id}\0{checkpoint_ns}".encode()).digest()
    return CLAIM_LOCK_CLASS, int.from_bytes(digest[:4], "big", signed=True)


def delta_walk_query(channel: str, keys: Sequence[HeadKey]) -> tuple[str, dict[str, Any]]:
    threads, namespaces, heads = (list(column) for column in zip(*keys, strict=True))
    params = {
        "channel": channel,
        "threads": threads,
        "namespaces": namespaces,
        "heads": heads,
        "limit": MAX_CHAIN,
    }
    return DELTA_WALK_SQL, params


@dataclass
class ChannelWalks:
    """One delta channel's walks on a page: each head's walk, the walks the plain look
    can take (packed, `plain.pack_walk`), and what gives those their verdicts (a helper
    may be judging them)."""

    walks: dict[HeadKey, _Walk]
    packed: dict[HeadKey, bytes]
    judge_plain: PlainJudge | None = None
    """Gives the packed walks' verdicts (a helper may be judging them); None, here."""


def gather_walks(
    keys: Sequence[HeadKey], rows: Sequence[Sequence[Any]], serde: SerializerProtocol
) -> ChannelWalks:
    """Each head's walk of one channel, from the walk query's rows."""
    walks: dict[HeadKey, _Walk] = {key: _Walk() for key in keys}
    for kind, thread_id, ns, head_id, depth, task_path, task_id, idx, type_, blob in rows:
        walk = walks[(thread_id, ns, head_id)]
        if kind == "x":
            walk.unended = True
        elif kind == "s":
            walk.seed = (type_, blob)
        else:
            sort_key = (-depth, *features.writes_sort_key(task_path or "", task_id or "", idx or 0))
            walk.writes.append((sort_key, type_, blob))
    if not plain_look(serde):
        return ChannelWalks(walks, {})
    packed = {key: walk.packed() for key, walk in walks.items()}
    return ChannelWalks(walks, {key: item for key, item in packed.items() if item is not None})


def judge_walks(
    page: PageVerdicts,
    channel: str,
    gathered: ChannelWalks,
    serde: SerializerProtocol,
    budget: int | None = None,
) -> None:
    """Fold the verdicts of one channel's walks into the page: a head stays clean only
    when its rebuilt history certainly is (and fits in `budget`, if given). The packed
    walks are judged together, the others one by one."""
    packed = gathered.packed
    judge = gathered.judge_plain or functools.partial(walk_verdicts, budget=budget)
    verdicts = dict(zip(packed, judge(list(packed.values())), strict=True))
    for key, walk in gathered.walks.items():
        clean = verdicts[key] if key in verdicts else walk.is_clean(channel, serde, budget)
        page.maybe_broken[key] = page.maybe_broken[key] or not clean


StartJudging = Callable[[list[bytes], int, int | None], PlainJudge]
"""Starts the verdicts of items of a kind under a token budget (None: none) and
returns their judge (`LookHelper.start_judging`)."""


@dataclass
class PageRows:
    """One page as read from the store: the heads' rows, and for each delta channel to
    walk, its walks or the error the query raised."""

    rows: list[tuple[Any, ...]]
    walks: dict[str, ChannelWalks | Exception] = field(default_factory=dict)
    suspects: set[HeadKey] = field(default_factory=set)
    """Heads whose other values may hold an integrity finding (`stored_values`)."""
    waiting: dict[HeadKey, WaitingHead] = field(default_factory=dict)
    """Heads with an open interrupt, when the run lists them (`asking`)."""
    answering: dict[HeadKey, tuple[StoredValue, ...]] = field(default_factory=dict)
    """The pending writes, as read, of each head that may hold a stale answer."""
    stale: dict[HeadKey, Any] = field(default_factory=dict)
    """The heads whose own writes prove their answer stale, with each head's time."""
    drifting: set[HeadKey] | None = None
    """With `--graph`, the heads it may strand (`drifting`); None without."""
    judge_plain: PlainJudge | None = None
    """Gives the verdicts of the page's `plain_blobs` (a helper may be judging them under
    `budget`); None, judged here."""
    judge_js: PlainJudge | None = None
    """The same for the blobs of its `js_rows` (LangGraph.js's)."""
    budget: int | None = None
    """The token budget a head must be proven within to be clean (`Selection`)."""

    def start_judging(self, serde: SerializerProtocol, start: StartJudging) -> None:
        """Hand the page's plain blobs, then each channel's packed walks, to `start` as
        soon as the page is read, in the order `judge_page` takes their verdicts."""
        self.judge_plain = start(plain_blobs(self.rows, serde), HISTORIES, self.budget)
        js = _blobs_at(self.rows, js_rows(self.rows, serde, self.budget))
        self.judge_js = start(js, JS_HISTORIES, self.budget)
        for gathered in self.walks.values():
            if isinstance(gathered, ChannelWalks):
                gathered.judge_plain = start(list(gathered.packed.values()), WALKS, self.budget)

    def read_others(
        self, others: Sequence[Sequence[Any]], serde: SerializerProtocol, waiting: bool
    ) -> None:
        """What the page's other values say (`split_rows`): the heads that may hold an
        integrity finding or a stale answer (those with their pending writes; those
        whose writes prove it, with their time), and with `waiting`, the heads waiting
        on a human."""
        answering = values.answering_heads(others)
        integrity = values.suspect_heads(others, trust_of(serde), serde.loads_typed, True)
        self.stale = stale_from_rows(others, answering, serde)
        self.suspects = integrity | (answering - self.stale.keys())
        self.answering = values.answering_writes(others, answering)
        if waiting:
            self.waiting = waiting_heads(others, serde)

    @property
    def after(self) -> tuple[str, str]:
        """The keyset cursor of the page that follows."""
        return (self.rows[-1][0], self.rows[-1][1])


def walks_needed(rows: Sequence[Sequence[Any]]) -> dict[str, list[HeadKey]]:
    """The delta channels to walk and their heads, read off the page's rows alone (the
    same as `heads_from_rows` finds), so the walks can be read before decoding."""
    found: dict[HeadKey, set[str]] = {}
    counted: dict[HeadKey, list[str]] = {}
    for thread_id, ns, checkpoint_id, _, _, channel, counted_here in rows:
        key = (thread_id, ns, checkpoint_id)
        found.setdefault(key, set()).update([channel] if channel is not None else [])
        counted[key] = list(counted_here or ())
    to_walk: dict[str, list[HeadKey]] = {}
    for key, names in counted.items():
        for name in names:
            if name not in found[key]:
                to_walk.setdefault(name, []).append(key)
            found[key].add(name)
    return to_walk


def judge_page(read: PageRows, serde: SerializerProtocol) -> list[Head]:
    """The page's heads with their verdicts, from rows already read."""
    page = heads_from_rows(read.rows, serde, (read.judge_plain, read.judge_js), read.budget)
    for key in read.suspects:
        page.maybe_broken[key] = True
    page.waiting = read.waiting
    page.answering = read.answering
    page.stale = read.stale
    page.drifting = read.drifting
    for channel in page.to_walk:
        walked = read.walks.get(channel)
        if isinstance(walked, Exception):
            walk_failed(page, channel, walked)
        elif walked is not None:
            judge_walks(page, channel, walked, serde, read.budget)
    return page.heads()


def walk_failed(page: PageVerdicts, channel: str, error: Exception) -> None:
    """The page's history query for `channel` failed: each of its heads is loaded on its
    own, so one bad thread does not hide the others. A store that is gone fails the run."""
    if store_lost(error):
        raise error
    logger.warning("history query failed, reading threads one by one: %s", error)
    for key in page.to_walk.get(channel, []):
        page.maybe_broken[key] = True


@dataclass
class _Walk:
    """One head's stored history of one delta channel, as the walk found it."""

    seed: tuple[str | None, bytes | None] | None = None
    writes: list[tuple[Any, str, bytes]] = field(default_factory=list)
    unended: bool = False
    """The chain loops, runs out of order or is too long: the full load reports it."""

    def packed(self) -> bytes | None:
        """This walk as one item for the plain look (`plain.pack_walk`); None when the
        look cannot take it (seed or writes not msgpack, a chain that did not end)."""
        if self.unended or any(type_ != "msgpack" for _, type_, _ in self.writes):
            return None
        if self.seed is not None and (self.seed[0] != "msgpack" or self.seed[1] is None):
            return None
        seed = None if self.seed is None else bytes(self.seed[1] or b"")
        return pack_walk(seed, [bytes(blob) for _, _, blob in sorted(self.writes)])

    def is_clean(self, channel: str, serde: SerializerProtocol, budget: int | None = None) -> bool:
        """The verdict of a walk the plain look cannot take: its history rebuilt from
        messages the serde builds (and counted, with a `budget`)."""
        if self.unended or (self.seed is not None and self.seed[1] is None):
            return False  # a chain not ended, a seed stored inline: the full load decides
        ordered = [(type_, bytes(blob)) for _, type_, blob in sorted(self.writes)]
        if plain_look(serde) and all(type_ == "msgpack" for type_, _ in ordered):
            return False  # only a seed the plain look cannot read comes here
        try:
            return self._loaded_clean(channel, ordered, serde, budget)
        except Exception:  # undecodable here: let the full load decide
            return False

    def _loaded_clean(
        self,
        channel: str,
        ordered: list[tuple[str, bytes]],
        serde: SerializerProtocol,
        budget: int | None,
    ) -> bool:
        history: Any = {"writes": [("", channel, serde.loads_typed(w)) for w in ordered]}
        if self.seed is not None:
            history["seed"] = serde.loads_typed((str(self.seed[0]), bytes(self.seed[1] or b"")))
        value = rebuild_messages(history)
        return value is not None and loaded_is_clean(value, budget)


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
