"""Any saver, through the public saver API only.

Finding heads needs one pass of `list()` over the store (the API has no other
way to enumerate threads); each head is then loaded with `get_tuple`. The run
is recorded in the repair checkpoints' own metadata, which `repairs_of` reads
back with a metadata filter.

The public API has no lock or transaction. Runs in this process that share the
saver object claim a head before writing it (`claims`), which for an in-memory
saver is the whole lock. Across processes, a repair is written after one more
look at the head and at its own checkpoint id, and checked after writing
(`races`): two runs repairing one head write the same checkpoint id, so the
store keeps one repair checkpoint for it whatever the timing. Nothing locks the
head between the last look and the `put`: when another run looks, writes and
checks in that window, both count the repair, and the stored checkpoint names
the run that wrote last.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ...decisions.plan import RUN_KEY, Assessment, NewCheckpoint, tuple_key
from ...decisions.races import Planned, Stored, WriteOutcome, head_moved, settled, thread_key
from ...decisions.rewind import RowCopy, Rung
from ...decisions.rewrites import InPlaceChanges, RewritePlan, WriteRewrite
from ...decoding.integrity import StoredValue
from ..base import (
    Head,
    RepairEntry,
    Selection,
    aput_new,
    chunks,
    entry_from_metadata,
    put_new,
)
from ..claims import claim
from ..stored_values import ThreadBlobs
from .listing import NotLoadable, SaverListing, names_run, refuses_filter
from .lost import Lost, seeds_missing

HeadKey = tuple[str, str, str]
NO_REWRITES = "this store keeps U+0000 as it is: no pending write needs rewriting"
NO_BYTES = (
    "this saver shows no stored bytes (only LangGraph's PostgreSQL and SQLite savers do): "
    "open its store with a postgresql:// or sqlite:/// TARGET"
)


class NoStoredBytes(ValueError):
    """The store is reached through the saver's API alone, which hands out objects."""


def _latest(keys: Iterable[tuple[str, str, str]]) -> list[Head]:
    """The newest checkpoint id per (thread, namespace); ids sort by time."""
    newest: dict[tuple[str, str], str] = {}
    for thread_id, ns, checkpoint_id in keys:
        if checkpoint_id > newest.get((thread_id, ns), ""):
            newest[(thread_id, ns)] = checkpoint_id
    return [Head(t, ns, cid) for (t, ns), cid in sorted(newest.items())]


def _thread_scope(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def _scopes(selection: Selection) -> list[Any]:
    if selection.threads is None:
        return [None]
    return [_thread_scope(t) for t in selection.threads]


def _thread_config(thread_id: str, checkpoint_ns: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}}


def _written_config(planned: Planned, new: NewCheckpoint) -> Any:
    """The config that loads `new` itself, once stored."""
    return Head(planned.thread_id, planned.checkpoint_ns, new.checkpoint_id).config


def _stored(tup: CheckpointTuple) -> Stored:
    parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    run_id = tup.metadata.get(RUN_KEY)
    return Stored(tuple_key(tup)[2], parent, run_id if isinstance(run_id, str) else None)


def _newer(tup: CheckpointTuple, planned: Planned) -> bool:
    return tuple_key(tup)[2] > planned.checkpoint_id


def _shows_delta(listing: SaverListing | None, head: Head) -> bool:
    return listing is not None and head.key[:2] in listing.delta_namespaces


def _listed_keys(
    listing: SaverListing, selection: Selection, listed: Iterable[CheckpointTuple]
) -> Iterator[HeadKey]:
    for tup in listed:
        key = tuple_key(tup)
        listing.saw(tup)
        if selection.takes(key[0]):
            yield key


class GenericStore:
    """Sync store over any saver."""

    listing: SaverListing | None = None
    """What the last `pages` was shown by the saver's `list()`; None: a driver read the
    store itself."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        self.listing = listing = SaverListing()
        keys = (
            key
            for scope in _scopes(selection)
            for key in _listed_keys(listing, selection, self.saver.list(scope))
        )
        for page in chunks(_latest(keys), selection.page_size):
            yield [self._with_history(head, selection) for head in page]

    def _with_history(self, head: Head, selection: Selection) -> Head:
        """The head, with the delta chains the saver's own prune cut (`lost`)."""
        if not _shows_delta(self.listing, head):
            return head
        return replace(head, history_lost=self.lost_history(head, selection))

    def lost_history(self, head: Head, selection: Selection) -> Lost:
        """`delta_seed_missing` for each selected channel whose chain, as the saver lists
        the head's namespace, was cut short."""
        listed = self.saver.list(_thread_config(head.thread_id, head.checkpoint_ns))
        return seeds_missing(listed, selection.channels)

    def count_heads(self, selection: Selection) -> int | None:
        """Unknown without listing the whole store, which is what a run does anyway."""
        return None

    def load(self, head: Head) -> CheckpointTuple | None:
        """The head; None if it is gone, and `NotLoadable` if the saver still lists
        the thread but cannot load what it lists."""
        tup = self.saver.get_tuple(head.config)
        if tup is None and next(
            iter(self.saver.list(_thread_scope(head.thread_id), limit=1)), None
        ):
            raise NotLoadable(head.config)
        return tup

    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        tup = self.saver.get_tuple(_thread_config(thread_id, checkpoint_ns))
        return None if tup is None else tup.config["configurable"]["checkpoint_id"]

    def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        """Unknown: the saver's API hands out objects, not rows (`formats`)."""
        return None

    def write(self, new: NewCheckpoint) -> None:
        put_new(self.saver, new)

    def write_repair(self, run_id: str, assessment: Assessment, new: NewCheckpoint) -> WriteOutcome:
        """Write the repair unless the head moved; its metadata is the run's record."""
        return self.write_on(run_id, assessment, new)

    def write_undo(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """Write an undo checkpoint on the repair it restores, as a repair is written."""
        return self.write_on(run_id, planned, new)

    def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """Claim the head in this process, look at it again and write `new` on it; then
        see what the write turned out to be."""
        with claim(self.saver, thread_key(planned)) as mine:
            if not mine:
                return "claimed"
            moved = self._moved(planned, new)
            if moved is not None:
                return moved
            self.write(new)
        return settled(self._newer_than(planned), planned, new, run_id)

    def _moved(self, planned: Planned, new: NewCheckpoint) -> WriteOutcome | None:
        """The last look before writing: at the head, and at `new`'s own id, which a run
        this process cannot see may have stored already."""
        moved = head_moved(self.head_id(*thread_key(planned)), planned, new)
        if moved is None and self.saver.get_tuple(_written_config(planned, new)) is not None:
            return "claimed"
        return moved

    def _newer_than(self, planned: Planned) -> Iterator[Stored]:
        """The thread's checkpoints newer than the head written on, newest first."""
        scope = _thread_config(planned.thread_id, planned.checkpoint_ns)
        listed = self.saver.list(scope)
        try:
            for tup in listed:
                if not _newer(tup, planned):
                    return
                yield _stored(tup)
        finally:  # a listing stopped early may still hold the saver's lock
            getattr(listed, "close", lambda: None)()

    nul_matters = False
    """Whether the store refuses U+0000 in text, as PostgreSQL does."""
    rewrites_writes = False
    """Whether the store changes a pending write in place, audited (PostgreSQL, SQLite)."""
    lists_waiting = False
    """Whether the first look sets each head's `waiting` (PostgreSQL); else the run
    reads the heads waiting on a human off each loaded head."""

    def type_pages(self, all_checkpoints: bool) -> Iterator[ThreadBlobs]:
        """Each page of threads with the msgpack blobs of their heads (or whole history)."""
        raise NoStoredBytes(NO_BYTES)

    def stored_values(self, key: HeadKey) -> list[StoredValue] | None:
        """A checkpoint's values as stored; None: the saver's API shows no bytes."""
        return None

    rewinds = False
    """Whether `--rewind-unreadable` can rewind here and undo it: only where the store
    reads parent ids without decoding and copies rows as stored (PostgreSQL, SQLite).
    The saver's API cannot copy bytes it cannot decode."""

    def chain_link(self, key: HeadKey) -> Rung | None:
        """A checkpoint's parent id and step, read without decoding: not through the API."""
        return None

    def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        raise NotImplementedError("the saver's API cannot copy a checkpoint as stored")

    def ready_to_write(self, changes: InPlaceChanges) -> None:
        """Nothing to check: the saver's API is all a run uses."""

    def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None:
        """Nothing to do: each repair checkpoint records its run in its metadata."""

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        """Nothing to do: the run's report is returned to the caller."""

    def repairs_of(self, run_id: str) -> Iterator[RepairEntry]:
        for tup in self._of_run(run_id):
            entry = entry_from_metadata(tup, run_id)
            if entry is not None:
                yield entry

    def _of_run(self, run_id: str) -> Iterator[CheckpointTuple]:
        """The run's checkpoints, by the saver's metadata filter; filtered here where the
        saver refuses the key (before it lists anything)."""
        try:
            yield from self.saver.list(None, filter={RUN_KEY: run_id})
        except (ValueError, NotImplementedError) as error:
            if not refuses_filter(error):
                raise
            yield from (tup for tup in self.saver.list(None) if names_run(tup, RUN_KEY, run_id))

    def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        """Never asked: only a store where `rewrites_writes` changes pending writes."""
        raise NotImplementedError(NO_REWRITES)

    def rewrites_of(self, run_id: str) -> list[WriteRewrite]:
        """None: this store never changes a pending write."""
        return []

    def answer_is_new(self, key: HeadKey) -> bool:
        """Whether the head's null-task answer was stored after any task took one: only
        a store that keeps the order of its rows can tell (SQLite); here, never."""
        return False

    def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[str]:
        raise NotImplementedError(NO_REWRITES)


class AsyncGenericStore:
    """Async store over any saver: the twin of `GenericStore`."""

    listing: SaverListing | None = None

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        self.listing = listing = SaverListing()
        listed = [tup for scope in _scopes(selection) async for tup in self.saver.alist(scope)]
        keys = _listed_keys(listing, selection, listed)
        for page in chunks(_latest(keys), selection.page_size):
            yield [await self._with_history(head, selection) for head in page]

    async def _with_history(self, head: Head, selection: Selection) -> Head:
        """The twin of `GenericStore._with_history`."""
        if not _shows_delta(self.listing, head):
            return head
        return replace(head, history_lost=await self.lost_history(head, selection))

    async def lost_history(self, head: Head, selection: Selection) -> Lost:
        """The twin of `GenericStore.lost_history`."""
        scope = _thread_config(head.thread_id, head.checkpoint_ns)
        return seeds_missing([tup async for tup in self.saver.alist(scope)], selection.channels)

    async def count_heads(self, selection: Selection) -> int | None:
        return None

    async def load(self, head: Head) -> CheckpointTuple | None:
        """The twin of `GenericStore.load`."""
        tup = await self.saver.aget_tuple(head.config)
        if tup is None and [
            t async for t in self.saver.alist(_thread_scope(head.thread_id), limit=1)
        ]:
            raise NotLoadable(head.config)
        return tup

    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        tup = await self.saver.aget_tuple(_thread_config(thread_id, checkpoint_ns))
        return None if tup is None else tup.config["configurable"]["checkpoint_id"]

    async def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        return None

    async def write(self, new: NewCheckpoint) -> None:
        await aput_new(self.saver, new)

    async def write_repair(
        self, run_id: str, assessment: Assessment, new: NewCheckpoint
    ) -> WriteOutcome:
        """The twin of `GenericStore.write_repair`."""
        return await self.write_on(run_id, assessment, new)

    async def write_undo(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        return await self.write_on(run_id, planned, new)

    async def write_on(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """The twin of `GenericStore.write_on`."""
        with claim(self.saver, thread_key(planned)) as mine:
            if not mine:
                return "claimed"
            moved = await self._moved(planned, new)
            if moved is not None:
                return moved
            await self.write(new)
        newer = [stored async for stored in self._newer_than(planned)]
        return settled(newer, planned, new, run_id)

    async def _moved(self, planned: Planned, new: NewCheckpoint) -> WriteOutcome | None:
        moved = head_moved(await self.head_id(*thread_key(planned)), planned, new)
        if moved is None and await self.saver.aget_tuple(_written_config(planned, new)):
            return "claimed"
        return moved

    async def _newer_than(self, planned: Planned) -> AsyncIterator[Stored]:
        scope = _thread_config(planned.thread_id, planned.checkpoint_ns)
        listed = self.saver.alist(scope)
        try:
            async for tup in listed:
                if not _newer(tup, planned):
                    return
                yield _stored(tup)
        finally:  # an async listing stopped early is not closed until collected
            close = getattr(listed, "aclose", None)
            if close is not None:
                await close()

    nul_matters = False
    lists_waiting = False
    rewrites_writes = False

    def type_pages(self, all_checkpoints: bool) -> AsyncIterator[ThreadBlobs]:
        raise NoStoredBytes(NO_BYTES)

    async def stored_values(self, key: HeadKey) -> list[StoredValue] | None:
        return None

    rewinds = False

    async def chain_link(self, key: HeadKey) -> Rung | None:
        return None

    async def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        raise NotImplementedError("the saver's API cannot copy a checkpoint as stored")

    async def ready_to_write(self, changes: InPlaceChanges) -> None:
        """Nothing to check: the saver's API is all a run uses."""

    async def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None:
        """Nothing to do: each repair checkpoint records its run in its metadata."""

    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        """Nothing to do: the run's report is returned to the caller."""

    async def repairs_of(self, run_id: str) -> AsyncIterator[RepairEntry]:
        async for tup in self._of_run(run_id):
            entry = entry_from_metadata(tup, run_id)
            if entry is not None:
                yield entry

    async def _of_run(self, run_id: str) -> AsyncIterator[CheckpointTuple]:
        """The twin of `GenericStore._of_run`."""
        try:
            async for tup in self.saver.alist(None, filter={RUN_KEY: run_id}):
                yield tup
        except (ValueError, NotImplementedError) as error:
            if not refuses_filter(error):
                raise
            async for tup in self.saver.alist(None):
                if names_run(tup, RUN_KEY, run_id):
                    yield tup

    async def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        raise NotImplementedError(NO_REWRITES)

    async def answer_is_new(self, key: HeadKey) -> bool:
        """The twin of `GenericStore.answer_is_new`."""
        return False

    async def rewrites_of(self, run_id: str) -> list[WriteRewrite]:
        return []

    async def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[str]:
        raise NotImplementedError(NO_REWRITES)
