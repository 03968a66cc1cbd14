"""Parent chains on a saver with no SQL: the in-memory saver's dict, and the base
class's default walk, which loads each parent through the saver's API and follows
only older ones (`delta.chains`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ...delta import chains
from ...delta.chains import broken_at


def check_chain(saver: Any, where: dict[str, Any]) -> None:
    """The in-memory saver's chain from `where`, checked in its dict."""
    stored: Mapping[str, Any] = saver.storage.get(where["thread_id"], {}).get(where["ns"], {})
    child: str = where["id"] or max(stored, default="")
    entry = stored.get(child)
    depth = 0
    while entry is not None and entry[2] is not None:
        parent = entry[2]
        if parent >= child or depth >= chains.MAX_CHAIN:
            raise broken_at(child, parent, depth)
        child, entry, depth = parent, stored.get(parent), depth + 1


async def acheck_chain(saver: Any, where: dict[str, Any]) -> None:
    """The same check, for the async API (the dict is the same)."""
    check_chain(saver, where)


def _id(config: RunnableConfig | None) -> str | None:
    return None if config is None else (config.get("configurable") or {}).get("checkpoint_id")


class GuardedWalk:
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
        if child_id is not None and (parent_id >= child_id or self.depth >= chains.MAX_CHAIN):
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
