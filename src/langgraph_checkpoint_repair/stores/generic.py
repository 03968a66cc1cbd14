"""Any saver, through the public saver API only.

Finding heads needs one pass of `list()` over the store (the API has no other
way to enumerate threads); each head is then loaded with `get_tuple`. The run
is recorded in the repair checkpoints' own metadata, which `repairs_of` reads
back with a metadata filter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from .base import Head, RepairEntry, Selection, entry_from_metadata
from .plan import RUN_KEY, Assessment, NewCheckpoint, tuple_key


def _latest(keys: Iterable[tuple[str, str, str]]) -> list[Head]:
    """The newest checkpoint id per (thread, namespace); ids sort by time."""
    newest: dict[tuple[str, str], str] = {}
    for thread_id, ns, checkpoint_id in keys:
        if checkpoint_id > newest.get((thread_id, ns), ""):
            newest[(thread_id, ns)] = checkpoint_id
    return [Head(t, ns, cid) for (t, ns), cid in sorted(newest.items())]


def _pages_of(heads: list[Head], size: int) -> Iterator[list[Head]]:
    for start in range(0, len(heads), size):
        yield heads[start : start + size]


def _scopes(selection: Selection) -> list[Any]:
    if selection.threads is None:
        return [None]
    return [{"configurable": {"thread_id": t}} for t in selection.threads]


def _thread_config(thread_id: str, checkpoint_ns: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}}


class GenericStore:
    """Sync store over any saver."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        keys = (
            tuple_key(tup)
            for scope in _scopes(selection)
            for tup in self.saver.list(scope)
            if selection.takes(tup.config["configurable"]["thread_id"])
        )
        yield from _pages_of(_latest(keys), selection.page_size)

    def count_heads(self, selection: Selection) -> int | None:
        """Unknown without listing the whole store, which is what a run does anyway."""
        return None

    def load(self, head: Head) -> CheckpointTuple | None:
        return self.saver.get_tuple(head.config)

    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        tup = self.saver.get_tuple(_thread_config(thread_id, checkpoint_ns))
        return None if tup is None else tup.config["configurable"]["checkpoint_id"]

    def write(self, new: NewCheckpoint) -> None:
        self.saver.put(new.config, new.checkpoint, new.metadata, new.new_versions)

    def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None:
        """Nothing to do: each repair checkpoint records its run in its metadata."""

    def record_repair(self, run_id: str, assessment: Assessment, new: NewCheckpoint) -> None:
        """Nothing to do: the repair checkpoint's metadata is the record."""

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        """Nothing to do: the run's report is returned to the caller."""

    def repairs_of(self, run_id: str) -> Iterator[RepairEntry]:
        for tup in self.saver.list(None, filter={RUN_KEY: run_id}):
            entry = entry_from_metadata(tup, run_id)
            if entry is not None:
                yield entry


class AsyncGenericStore:
    """Async store over any saver: the twin of `GenericStore`."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        keys = [
            tuple_key(tup)
            for scope in _scopes(selection)
            async for tup in self.saver.alist(scope)
            if selection.takes(tup.config["configurable"]["thread_id"])
        ]
        for page in _pages_of(_latest(keys), selection.page_size):
            yield page

    async def count_heads(self, selection: Selection) -> int | None:
        return None

    async def load(self, head: Head) -> CheckpointTuple | None:
        return await self.saver.aget_tuple(head.config)

    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        tup = await self.saver.aget_tuple(_thread_config(thread_id, checkpoint_ns))
        return None if tup is None else tup.config["configurable"]["checkpoint_id"]

    async def write(self, new: NewCheckpoint) -> None:
        await self.saver.aput(new.config, new.checkpoint, new.metadata, new.new_versions)

    async def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None:
        """Nothing to do: each repair checkpoint records its run in its metadata."""

    async def record_repair(self, run_id: str, assessment: Assessment, new: NewCheckpoint) -> None:
        """Nothing to do: the repair checkpoint's metadata is the record."""

    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        """Nothing to do: the run's report is returned to the caller."""

    async def repairs_of(self, run_id: str) -> AsyncIterator[RepairEntry]:
        async for tup in self.saver.alist(None, filter={RUN_KEY: run_id}):
            entry = entry_from_metadata(tup, run_id)
            if entry is not None:
                yield entry
