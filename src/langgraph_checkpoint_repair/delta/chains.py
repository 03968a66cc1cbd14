"""Parent chains that end: guards around LangGraph's delta-channel history walk.

LangGraph rebuilds a delta channel by following `parent_checkpoint_id` from a
checkpoint until it finds the channel's seed. Stored rows can say anything: a
chain whose parents loop (A's parent is B, B's is A) makes some savers' walks
(`InMemorySaver`, `PostgresSaver`, the base class's default) run forever. A
parent is always older than its child (checkpoint ids sort by time), so a
chain is followed only while each parent's id is smaller than its child's: an
edge that breaks the order (every cycle has one) or a chain longer than
`MAX_CHAIN` is refused with `BrokenChain` before LangGraph walks it. Each store
driver checks a chain its own way, from ids alone (`stores.history`); the rule,
the error and the memory of chains already checked are here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from langchain_core.runnables import RunnableConfig

MAX_CHAIN = 100_000
"""Ancestors a walk may visit; a longer chain is refused rather than walked."""
REMEMBERED_CHAINS = 10_000
"""Checkpoints a `VerifiedChains` remembers as checked, the oldest forgotten first."""


class BrokenChain(ValueError):
    """A checkpoint's parent chain loops, runs out of order, or is longer than MAX_CHAIN."""


def broken_at(checkpoint_id: str, parent: str, depth: int) -> BrokenChain:
    if depth >= MAX_CHAIN:
        return BrokenChain(f"parent chain longer than {MAX_CHAIN} checkpoints")
    return BrokenChain(
        f"cyclic parent chain: checkpoint {checkpoint_id!r} names {parent!r}, "
        "which is not older, as its parent"
    )


def raise_if_found(row: Any) -> None:
    """Raise for a row (id, parent, depth) a driver's chain query found; nothing for None."""
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
