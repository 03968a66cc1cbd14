"""Parent chains that end: guards around LangGraph's delta-channel history walk.

LangGraph rebuilds a delta channel by following `parent_checkpoint_id` from a
checkpoint until it finds the channel's seed. Stored rows can say anything: a
chain whose parents loop (A's parent is B, B's is A) makes some savers' walks
(`InMemorySaver`, `PostgresSaver`, the base class's default) run forever. A
parent is always older than its child (checkpoint ids sort by time), so a
chain is followed only while each parent's id is smaller than its child's: an
edge that breaks the order (every cycle has one) or a chain longer than
`MAX_CHAIN` is refused with `BrokenChain` before LangGraph walks it. The check
reads ids only; the base class's default walk is replaced by the same walk
with the guard built in. A saver with a walk of its own that we do not know is
trusted as it is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

MAX_CHAIN = 100_000
"""Ancestors a walk may visit; a longer chain is refused rather than walked."""
REMEMBERED_CHAINS = 10_000
"""Checkpoints a `VerifiedChains` remembers as checked, the oldest forgotten first."""

_CHAIN_SQL = """
WITH RECURSIVE chain (id, parent, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, 0 FROM checkpoints
    WHERE thread_id = {p}thread_id{s} AND checkpoint_ns = {p}ns{s}
        AND checkpoint_id = COALESCE({p}id{s}, (
            SELECT max(checkpoint_id) FROM checkpoints
            WHERE thread_id = {p}thread_id{s} AND checkpoint_ns = {p}ns{s}))
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1
    FROM chain {step}
)
SELECT id, parent, depth FROM chain
WHERE parent IS NOT NULL AND (parent >= id OR depth >= {p}limit{s})
LIMIT 1"""
_JOINED_STEP = """JOIN checkpoints c
        ON c.thread_id = :thread_id AND c.checkpoint_ns = :ns
        AND c.checkpoint_id = chain.parent AND c.checkpoint_id < chain.id
    WHERE chain.depth < :limit"""
# PostgreSQL plans the plain join as a scan of the thread's rows per step (quadratic in
# the chain's length) when its statistics call the thread small; a LATERAL lookup kept
# apart by OFFSET 0 is one primary-key probe per step whatever they say.
_LATERAL_STEP = """CROSS JOIN LATERAL (
        SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints
        WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s
            AND checkpoint_id = chain.parent
        OFFSET 0) c
    WHERE c.checkpoint_id < chain.id AND chain.depth < %(limit)s"""
POSTGRES_CHAIN_SQL = _CHAIN_SQL.format(p="%(", s=")s", step=_LATERAL_STEP)
SQLITE_CHAIN_SQL = _CHAIN_SQL.format(p=":", s="", step=_JOINED_STEP)


class BrokenChain(ValueError):
    """A checkpoint's parent chain loops, runs out of order, or is longer than MAX_CHAIN."""


def broken_at(checkpoint_id: str, parent: str, depth: int) -> BrokenChain:
    if depth >= MAX_CHAIN:
        return BrokenChain(f"parent chain longer than {MAX_CHAIN} checkpoints")
    return BrokenChain(
        f"cyclic parent chain: checkpoint {checkpoint_id!r} names {parent!r}, "
        "which is not older, as its parent"
    )


def _where(config: RunnableConfig) -> dict[str, Any]:
    configurable = config.get("configurable") or {}
    return {
        "thread_id": str(configurable.get("thread_id")),
        "ns": configurable.get("checkpoint_ns", ""),
        "id": configurable.get("checkpoint_id"),
        "limit": MAX_CHAIN,
    }


def _kind(saver: BaseCheckpointSaver[Any]) -> str:
    """Whose walk this saver runs: "default" (the base class's), a known saver, or "own"."""
    walk = getattr(type(saver), "get_delta_channel_history", None)
    if walk is getattr(BaseCheckpointSaver, "get_delta_channel_history", None):
        return "default"
    owner = next(c for c in type(saver).__mro__ if "get_delta_channel_history" in vars(c))
    module = owner.__module__  # a subclass that keeps its base's walk runs that walk
    if module == "langgraph.checkpoint.memory":
        return "memory"
    for name in ("postgres", "sqlite"):
        if module == f"langgraph.checkpoint.{name}":
            return name
        if module == f"langgraph.checkpoint.{name}.aio":
            return f"a{name}"
    return "own"


def _check_memory(saver: Any, where: dict[str, Any]) -> None:
    stored: Mapping[str, Any] = saver.storage.get(where["thread_id"], {}).get(where["ns"], {})
    child: str = where["id"] or max(stored, default="")
    entry = stored.get(child)
    depth = 0
    while entry is not None and entry[2] is not None:
        parent = entry[2]
        if parent >= child or depth >= MAX_CHAIN:
            raise broken_at(child, parent, depth)
        child, entry, depth = parent, stored.get(parent), depth + 1


def _raise_if_found(row: Any) -> None:
    if row is not None:
        raise broken_at(str(row[0]), str(row[1]), int(row[2]))


ChainKey = tuple[str, str, str]


class VerifiedChains:
    """The checkpoints whose parent chain was found to end, so that loading one again,
    or a child that names one as its older parent, costs no second check.

    LangGraph writes each checkpoint id once (every `put` makes a new, newer id), so
    a chain found ordered stays ordered unless its rows are rewritten by hand; a
    chain found broken is not remembered and is refused at every load. Bounded:
    the oldest entries are forgotten first.
    """

    def __init__(self, size: int = REMEMBERED_CHAINS) -> None:
        self._size = size
        self._keys: OrderedDict[ChainKey, None] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, config: RunnableConfig, parent_id: str | None = None) -> bool:
        """True when `config`'s chain was checked, or `parent_id`, older, names a
        checked one (then `config` is remembered too)."""
        key = chain_key(config)
        if key is None:
            return False
        with self._lock:
            if key in self._keys:
                return True
        if parent_id is None or parent_id >= key[2]:
            return False
        with self._lock:
            found = (key[0], key[1], parent_id) in self._keys
        if found:
            self.add(config)
        return found

    def add(self, config: RunnableConfig) -> None:
        key = chain_key(config)
        if key is None:
            return
        with self._lock:
            self._keys[key] = None
            if len(self._keys) > self._size:
                self._keys.popitem(last=False)


def chain_key(config: RunnableConfig) -> ChainKey | None:
    """(thread, namespace, checkpoint id) of a config naming one checkpoint; else None."""
    configurable = config.get("configurable") or {}
    checkpoint_id = configurable.get("checkpoint_id")
    if not checkpoint_id:
        return None
    return (
        str(configurable.get("thread_id")),
        configurable.get("checkpoint_ns", ""),
        checkpoint_id,
    )


def check_chain(saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> None:
    """Raise `BrokenChain` when the walk from `config` would not end (sync savers)."""
    kind, where = _kind(saver), _where(config)
    if kind == "memory":
        _check_memory(saver, where)
    elif kind == "sqlite":
        with saver.lock:  # type: ignore[attr-defined]
            cursor = saver.conn.execute(SQLITE_CHAIN_SQL, where)  # type: ignore[attr-defined]
            _raise_if_found(cursor.fetchone())
    elif kind == "postgres":
        with saver._cursor() as cursor:  # type: ignore[attr-defined]
            cursor.execute(POSTGRES_CHAIN_SQL, where)
            _raise_if_found(_as_row(cursor.fetchone()))


async def acheck_chain(saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> None:
    """The async twin of `check_chain`."""
    kind, where = _kind(saver), _where(config)
    if kind == "memory":
        _check_memory(saver, where)
    elif kind == "asqlite":
        async with saver.lock:  # type: ignore[attr-defined]
            cursor = await saver.conn.execute(SQLITE_CHAIN_SQL, where)  # type: ignore[attr-defined]
            _raise_if_found(await cursor.fetchone())
    elif kind == "apostgres":
        async with saver._cursor() as cursor:  # type: ignore[attr-defined]
            await cursor.execute(POSTGRES_CHAIN_SQL, where)
            _raise_if_found(_as_row(await cursor.fetchone()))


def _as_row(row: Any) -> Any:
    """A dict row (LangGraph's savers use dict_row) as a tuple."""
    return tuple(row.values()) if isinstance(row, Mapping) else row


def delta_history(
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    channels: Sequence[str],
    verified: VerifiedChains | None = None,
    parent_id: str | None = None,
) -> Mapping[str, Any]:
    """`saver.get_delta_channel_history`, refused with `BrokenChain` where it would not end.

    A chain `verified` knows (from `config`, or from its older parent `parent_id`)
    is not checked again; one checked here is added to it.
    """
    if _kind(saver) == "default":
        return _GuardedWalk(channels).walk(saver, config)
    if verified is None or not verified.known(config, parent_id):
        check_chain(saver, config)
        if verified is not None:
            verified.add(config)
    return saver.get_delta_channel_history(config=config, channels=channels)


async def adelta_history(
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    channels: Sequence[str],
    verified: VerifiedChains | None = None,
    parent_id: str | None = None,
) -> Mapping[str, Any]:
    """The async twin of `delta_history`."""
    walk = getattr(type(saver), "aget_delta_channel_history", None)
    if walk is getattr(BaseCheckpointSaver, "aget_delta_channel_history", None):
        return await _GuardedWalk(channels).awalk(saver, config)
    if verified is None or not verified.known(config, parent_id):
        await acheck_chain(saver, config)
        if verified is not None:
            verified.add(config)
    return await saver.aget_delta_channel_history(config=config, channels=channels)


def _id(config: RunnableConfig | None) -> str | None:
    return None if config is None else (config.get("configurable") or {}).get("checkpoint_id")


class _GuardedWalk:
    """The base class's `get_delta_channel_history`, following only older parents."""

    def __init__(self, channels: Sequence[str]) -> None:
        self.channels = list(channels)
        self.collected: dict[str, list[Any]] = {name: [] for name in self.channels}
        self.seeds: dict[str, Any] = {}
        self.remaining = set(self.channels)
        self.depth = 0

    def walk(self, saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> dict[str, Any]:
        tup = saver.get_tuple(config) if self.channels else None
        while tup is not None and (parent := self.next_parent(tup)) is not None:
            tup = saver.get_tuple(parent)
            if tup is not None:
                self.take(tup)
        return self.result()

    async def awalk(
        self, saver: BaseCheckpointSaver[Any], config: RunnableConfig
    ) -> dict[str, Any]:
        tup = await saver.aget_tuple(config) if self.channels else None
        while tup is not None and (parent := self.next_parent(tup)) is not None:
            tup = await saver.aget_tuple(parent)
            if tup is not None:
                self.take(tup)
        return self.result()

    def next_parent(self, child: CheckpointTuple) -> RunnableConfig | None:
        """The parent to load next; None when the walk is over; refused when out of order."""
        parent, child_id = child.parent_config, _id(child.config)
        parent_id = _id(parent)
        if not self.remaining or parent is None or parent_id is None:
            return None
        if child_id is not None and (parent_id >= child_id or self.depth >= MAX_CHAIN):
            raise broken_at(child_id, parent_id, self.depth)
        self.depth += 1
        return parent

    def take(self, tup: CheckpointTuple) -> None:
        for write in reversed(tup.pending_writes or []):
            if write[1] in self.remaining:
                self.collected[write[1]].append(write)
        values = tup.checkpoint["channel_values"]
        for name in [name for name in self.remaining if name in values]:
            self.seeds[name] = values[name]
            self.remaining.discard(name)

    def result(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for name in self.channels:
            entry: dict[str, Any] = {"writes": list(reversed(self.collected[name]))}
            if name in self.seeds:
                entry["seed"] = self.seeds[name]
            result[name] = entry
        return result
