"""A page of PostgreSQL heads judged from its stored rows: the first look's verdicts.

The PostgreSQL driver reads a page of heads in one query (`stores.postgres.base`)
and hands the rows here. Blobs LangGraph's default serializer wrote get the plain
look (`plain`), LangGraph.js's `json` blobs theirs (`js_look`), both of which a
helper process may be judging meanwhile (`helper`); any other blob is decoded with
the saver's own serde and its history given the engine's verdict. A delta channel
with nothing stored at its head is judged from its walk (the walk query's rows).
Only heads that may be broken are loaded in full.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ...codes import FindingCode
from ...compatibility import features
from ...decoding.integrity import StoredValue, trust_of
from ...delta import rebuild_messages, snapshot_value
from ...engine.repair import history_is_clean
from ...js.values import JsJsonPlusSerializer
from ...waiting import SENDS_CHANNEL, WaitingHead
from ..base import Head, Selection
from ..faults import store_lost
from ..stored_values import answering_heads, answering_writes, suspect_heads
from .asking import asking_again, ids_cleared, stale_from_rows, waiting_heads
from .plain import (
    EMPTY_SEEDS,
    HISTORIES,
    JS_HISTORIES,
    WALKS,
    js_verdicts,
    pack_walk,
    plain_blob_is_clean,
    plain_verdicts,
    walk_verdicts,
)

logger = logging.getLogger("langgraph_checkpoint_repair.batch")

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
    lost: dict[HeadKey, list[tuple[FindingCode, str]]] = field(default_factory=dict)
    """(code, channel) of each selected channel whose stored history is gone."""
    asking_again: set[HeadKey] = field(default_factory=set)

    def heads(self) -> list[Head]:
        return [
            Head(
                *key,
                maybe_broken=broken,
                channels=frozenset(self.found[key]),
                waiting=self.waiting.get(key),
                writes=self.answering.get(key),
                stale_since=self.stale.get(key),
                asks_again=key in self.asking_again,
                may_drift=may_drift(key, self.drifting),
                history_lost=tuple(self.lost.get(key, ())),
            )
            for key, broken in self.maybe_broken.items()
        ]


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
        clean = clean and not is_empty_seed(type_, blob)
        page.maybe_broken[key] = page.maybe_broken.get(key, False) or not clean
        page.found.setdefault(key, set()).update(_held(type_, channel, counted_here))
        counted[key] = list(counted_here or ())
    for key, names in counted.items():
        for name in names:
            if name not in page.found[key]:
                page.to_walk.setdefault(name, []).append(key)
            page.found[key].add(name)
    return page


def is_empty_seed(type_: str | None, blob: bytes | None) -> bool:
    """Whether a stored value is an empty list or snapshot, read off its bytes: a seed
    that held nothing is how an erased history was committed, so its rows prove it on
    load (`delta.proof`). Other seeds are not proven by a scan: that costs a whole
    thread's rows. A blob of another serializer (encrypted, say) is not decoded here."""
    if blob is None:
        return False
    if type_ == "msgpack":
        return bytes(blob) in EMPTY_SEEDS
    return type_ == "json" and bytes(blob).strip() == b"[]"


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
        return not isinstance(value, list) or history_is_clean(value, budget)
    except Exception:  # undecodable here: let the full load decide
        return False


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
        elif kind == "c":
            walk.cut = True
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
        to_prove = walk.seed is not None and is_empty_seed(*walk.seed)
        page.maybe_broken[key] = page.maybe_broken[key] or not clean or walk.cut or to_prove
        if walk.cut:
            page.lost.setdefault(key, []).append(("delta_seed_missing", channel))


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
    asking_again: set[HeadKey] = field(default_factory=set)
    """The heads whose interrupt ids may not tell questions apart (`asking.asking_again`)."""
    drifting: set[HeadKey] | None = None
    """With `--graph`, the heads it may strand (`drift_suspects`); None without."""
    lost: dict[HeadKey, list[tuple[FindingCode, str]]] = field(default_factory=dict)
    """The selected channels whose stored history is gone, found by the heads query
    (`blob_missing`); the walks add theirs (`delta_seed_missing`)."""
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
        self, others: Sequence[Sequence[Any]], serde: SerializerProtocol, selection: Selection
    ) -> None:
        """What the page's other values say (`split_rows`): the heads that may hold an
        integrity finding or a stale answer (those with their pending writes; those
        whose writes prove it, with their time), those whose interrupt ids may fail
        (`asking_again`, less those whose rows show no id finding), and when the run
        lists them, the heads waiting on a human."""
        answering = answering_heads(others)
        integrity = suspect_heads(others, trust_of(serde), serde.loads_typed, True)
        self.stale = stale_from_rows(others, answering, serde)
        self.suspects = integrity | (answering - self.stale.keys())
        self.answering = answering_writes(others, answering)
        again = asking_again(others)
        self.asking_again = again - ids_cleared(others, again, serde, selection.interrupt_ids)
        if selection.waiting:
            self.waiting = waiting_heads(others, serde)

    @property
    def after(self) -> tuple[str, str]:
        """The keyset cursor of the page that follows."""
        return (self.rows[-1][0], self.rows[-1][1])


def _held(type_: str | None, channel: str | None, counted: Sequence[str] | None) -> list[str]:
    """The channel a head's row holds a value of. LangGraph.js's saver writes an `empty`
    row at a delta channel's version: its value is still the walk's to find, where this
    LangGraph has delta channels to rebuild it with."""
    if channel is None:
        return []
    if type_ == "empty" and channel in (counted or ()) and features.has_delta_channels():
        return []
    return [channel]


def walks_needed(rows: Sequence[Sequence[Any]]) -> dict[str, list[HeadKey]]:
    """The delta channels to walk and their heads, read off the page's rows alone (the
    same as `heads_from_rows` finds), so the walks can be read before decoding."""
    found: dict[HeadKey, set[str]] = {}
    counted: dict[HeadKey, list[str]] = {}
    for thread_id, ns, checkpoint_id, type_, _, channel, counted_here in rows:
        key = (thread_id, ns, checkpoint_id)
        found.setdefault(key, set()).update(_held(type_, channel, counted_here))
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
    page.asking_again = read.asking_again
    page.drifting = read.drifting
    page.lost = {key: list(found) for key, found in read.lost.items()}
    for key in page.lost:
        page.maybe_broken[key] = True
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
    cut: bool = False
    """The chain ends, with no seed, where rows were deleted (`delta_seed_missing`)."""

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
        return value is not None and history_is_clean(value, budget)


# Which heads of a page the graph given with `--graph` may strand, from the rows alone:
# a root head is cleared when every channel it stores is one of the graph's (the heads
# query lists those it is not: `unknown`) and it holds no pending send. Every other head
# is loaded and checked (`drift.findings`).
CHANNEL, UNKNOWN = 5, 11
"""Positions in a heads query row: the value's channel, the stored channels the graph lacks."""


def drift_suspects(rows: Sequence[Sequence[Any]]) -> set[HeadKey]:
    """The heads whose rows name a channel the graph lacks, or a pending send."""
    return {
        (row[0], row[1], row[2]) for row in rows if row[UNKNOWN] or row[CHANNEL] == SENDS_CHANNEL
    }


def may_drift(key: HeadKey, suspects: set[HeadKey] | None) -> bool:
    """Whether the head must be loaded to be checked: without a graph's look (None), a
    subgraph's head (its graph is another), or a suspect."""
    return suspects is None or bool(key[1]) or key in suspects
