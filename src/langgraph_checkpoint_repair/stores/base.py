"""What every thread store offers the batch runner, sync and async."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..codes import FindingCode, InterruptIds
from ..decisions.plan import Assessment, NewCheckpoint, shard_of
from ..decisions.races import Planned, WriteOutcome
from ..decisions.rewind import RowCopy, Rung
from ..decisions.rewrites import InPlaceChanges, RewritePlan, WriteRewrite
from ..decisions.undo_plans import RepairEntry as RepairEntry
from ..decisions.undo_plans import entry_from_metadata as entry_from_metadata
from ..decoding.integrity import StoredValue
from ..waiting import WaitingHead
from .generic.listing import SaverListing
from .stored_values import ThreadBlobs

PAGE_SIZE = 1000


class StoreNotReady(Exception):
    """The store cannot take this run's writes (its audit tables are missing or out of
    date, the role lacks a privilege); found before anything is written. One line."""


@dataclass(frozen=True)
class Head:
    """The latest checkpoint of one (thread, namespace)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    maybe_broken: bool = True
    """False only when a cheap look at the stored bytes proved the history clean."""
    channels: frozenset[str] = frozenset()
    """Selected channels that cheap look found stored (heads that are loaded say so too)."""
    waiting: WaitingHead | None = None
    """Its open interrupts, where the store's first look lists them (`lists_waiting`)."""
    writes: tuple[StoredValue, ...] | None = None
    """Its pending writes as stored, where the first look read them for a possible stale
    answer (PostgreSQL); a run plans the answer's deletion from them."""
    may_drift: bool = True
    """False only where the first look proved the graph given with `--graph` would find
    nothing in it (`drift.look`): its next work names only the graph's nodes."""
    history_lost: tuple[tuple[FindingCode, str], ...] = ()
    """(code, channel) for each selected channel whose stored history the store's look
    found gone (`delta_seed_missing`, `blob_missing`): the head is reported and never
    written on."""
    asks_again: bool = True
    """False only where the first look proved the head's interrupt ids hold no finding
    (`interrupt_ids`): no task asks after taking an answer, nor two questions in one
    write, or its rows show those ids fine under the run's scheme."""
    stale_since: str | None = None
    """Its time, where the first look found in its own writes a stale answer
    (`stale_answers`; PostgreSQL): a head it otherwise cleared is then judged on
    these rows without being loaded."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.thread_id, self.checkpoint_ns, self.checkpoint_id)

    @property
    def config(self) -> Any:
        return {
            "configurable": {
                "thread_id": self.thread_id,
                "checkpoint_ns": self.checkpoint_ns,
                "checkpoint_id": self.checkpoint_id,
            }
        }


@dataclass(frozen=True)
class Selection:
    """Which heads a run looks at."""

    channels: Sequence[str] = ("messages",)
    threads: Sequence[str] | None = None
    shard: tuple[int, int] | None = None
    """(K, N): part K of N. PostgreSQL cuts ranges of thread ids (`postgres.shards`);
    the other stores take the threads whose stable hash modulo N is K (`takes`)."""
    page_size: int = PAGE_SIZE
    """Heads read per query: memory stays bounded whatever the store's size."""
    token_budget: int | None = None
    """With a number, a head the store's first look calls clean (`Head.maybe_broken`
    False) must also be proven within this many tokens of LangChain's approximation
    (`token_bound`); a store that cannot prove it loads the head."""
    waiting: bool = False
    """The run lists the heads waiting on a human (an open interrupt): a store whose first
    look can (`lists_waiting`) sets each page head's `Head.waiting`."""
    graph_channels: frozenset[str] | None = None
    """With `--graph`, the channels of the graph and its subgraphs: a store whose first
    look can clears a root head whose stored channels are all among them and that holds
    no pending send (`Head.may_drift`); every other head is loaded and checked."""
    interrupt_ids: InterruptIds | None = None
    """The scheme of the release that will resume (`interrupt_ids`): a store whose first
    look can clears a head that asks again whose rows show no id finding under it."""

    def takes(self, thread_id: str) -> bool:
        if self.threads is not None and thread_id not in self.threads:
            return False
        return self.shard is None or shard_of(thread_id, self.shard[1]) == self.shard[0]


class ThreadStore(Protocol):
    saver: BaseCheckpointSaver[Any]
    listing: SaverListing | None
    nul_matters: bool
    rewrites_writes: bool
    lists_waiting: bool

    def pages(self, selection: Selection) -> Iterator[list[Head]]: ...
    def count_heads(self, selection: Selection) -> int | None: ...
    def load(self, head: Head) -> CheckpointTuple | None: ...
    def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None: ...
    def type_pages(self, all_checkpoints: bool) -> Iterator[ThreadBlobs]: ...

    rewinds: bool

    def chain_link(self, key: tuple[str, str, str]) -> Rung | None: ...
    def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome: ...
    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None: ...
    def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None: ...
    def write(self, new: NewCheckpoint) -> None: ...
    def ready_to_write(self, changes: InPlaceChanges) -> None: ...
    def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None: ...
    def write_repair(
        self, run_id: str, assessment: Assessment, new: NewCheckpoint
    ) -> WriteOutcome: ...
    def write_undo(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome: ...
    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None: ...
    def repairs_of(self, run_id: str) -> Iterator[RepairEntry]: ...
    def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome: ...
    def rewrites_of(self, run_id: str) -> list[WriteRewrite]: ...
    def answer_is_new(self, key: tuple[str, str, str]) -> bool: ...
    def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[str]: ...


class AsyncThreadStore(Protocol):
    saver: BaseCheckpointSaver[Any]
    listing: SaverListing | None
    nul_matters: bool
    rewrites_writes: bool
    lists_waiting: bool

    def pages(self, selection: Selection) -> AsyncIterator[list[Head]]: ...
    async def count_heads(self, selection: Selection) -> int | None: ...
    async def load(self, head: Head) -> CheckpointTuple | None: ...
    async def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None: ...
    def type_pages(self, all_checkpoints: bool) -> AsyncIterator[ThreadBlobs]: ...

    rewinds: bool

    async def chain_link(self, key: tuple[str, str, str]) -> Rung | None: ...
    async def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome: ...
    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None: ...
    async def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None: ...
    async def write(self, new: NewCheckpoint) -> None: ...
    async def ready_to_write(self, changes: InPlaceChanges) -> None: ...
    async def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None: ...
    async def write_repair(
        self, run_id: str, assessment: Assessment, new: NewCheckpoint
    ) -> WriteOutcome: ...
    async def write_undo(
        self, run_id: str, planned: Planned, new: NewCheckpoint
    ) -> WriteOutcome: ...
    async def finish_run(self, run_id: str, summary: dict[str, Any]) -> None: ...
    def repairs_of(self, run_id: str) -> AsyncIterator[RepairEntry]: ...
    async def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome: ...
    async def rewrites_of(self, run_id: str) -> list[WriteRewrite]: ...
    async def answer_is_new(self, key: tuple[str, str, str]) -> bool: ...
    async def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[str]: ...


def put_new(saver: BaseCheckpointSaver[Any], new: NewCheckpoint, writes_first: bool = True) -> None:
    """Write `new` through `saver`, its pending writes first: no reader sees the
    checkpoint without them. A store whose saver commits each call and whose claim is
    the open transaction (SQLite) puts the checkpoint first instead (`writes_first`
    False): its put ends the transaction that found the head unmoved, so it must be the
    write that transaction covers; the writes follow at once."""
    if not writes_first:
        saver.put(new.config, new.checkpoint, new.metadata, new.new_versions)
    for task_id, writes in new.task_writes():
        saver.put_writes(new.written_config, writes, task_id)
    if writes_first:
        saver.put(new.config, new.checkpoint, new.metadata, new.new_versions)


async def aput_new(
    saver: BaseCheckpointSaver[Any], new: NewCheckpoint, writes_first: bool = True
) -> None:
    """The async twin of `put_new`."""
    if not writes_first:
        await saver.aput(new.config, new.checkpoint, new.metadata, new.new_versions)
    for task_id, writes in new.task_writes():
        await saver.aput_writes(new.written_config, writes, task_id)
    if writes_first:
        await saver.aput(new.config, new.checkpoint, new.metadata, new.new_versions)


T = TypeVar("T")


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size`, the last one shorter: pages of a run, read lazily."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
