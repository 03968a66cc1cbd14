"""`prune --compact`'s writes: each delta namespace's snapshot put under its head and
proven, before the prune behind it deletes anything (`retention.compact`).

The snapshot holds each delta channel's value at the head as LangGraph rebuilds it (a
message channel by the message reducer, any other by the graph's own channel and
reducer, given with `--graph`), and is written by the store's own saver, so in the
thread's own format. Once the head points at it, the head is rebuilt again by LangGraph's
walk: the same value in every channel, or the head is pointed back, the snapshot
deleted and the thread left as it was (`compact_unproven`).
A LangGraph.js thread is not compacted (its snapshot would be written in Python's
format), nor a Redis one (the saver's put would make the snapshot the thread's head);
each is pruned as any other, its delta chains kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..delta import as_snapshot, replayed, snapshot_value
from ..delta.channels import Rebuilt
from ..drift.findings import graph_at
from ..drift.shape import GraphShape
from ..js.rows import is_js_checkpoint
from ..redact import one_line
from ..retention.compact import Compaction, compactions, snapshot_under
from ..retention.keep import StoredCheckpoint, written_since
from ..retention.outcome import ThreadPruned
from ..retention.rules import PruneRules
from ..stores import Head
from ..stores.history import aread_rebuilt, read_rebuilt


def to_compact(rows: Sequence[StoredCheckpoint] | None, rules: PruneRules) -> list[Compaction]:
    """The thread's namespaces to compact; none for a thread the prune leaves to the
    application (recent) or cannot read."""
    if rows is None or written_since(rows, rules.recent_after):
        return []
    return compactions(rows)


@dataclass
class Compacted:
    """What compacting one thread did (in a dry run, would do): the namespaces given a
    snapshot (or let through by every check a real run makes before writing one), and
    why the others were not."""

    namespaces: set[str] = field(default_factory=set)
    refused: list[str] = field(default_factory=list)

    def refuse(self, found: Compaction, why: str) -> None:
        where = f" in namespace {found.checkpoint_ns!r}" if found.checkpoint_ns else ""
        self.refused.append(f"{why}{where}")

    def to_write(
        self,
        found: Compaction,
        read: tuple[CheckpointTuple, dict[str, Any]] | str | None,
        dry_run: bool,
    ) -> tuple[CheckpointTuple, dict[str, Any]] | None:
        """The head read (`head_values`) and the values to snapshot under it; None when
        nothing is written: the head is gone, it cannot be compacted (said), or the run
        is dry (the namespace then counts as the real run would compact it)."""
        if isinstance(read, str):
            self.refuse(found, read)
            return None
        if read is not None and dry_run:
            self.namespaces.add(found.checkpoint_ns)
            return None
        return read

    def rules_for(self, rules: PruneRules) -> PruneRules:
        """The prune's rules after it: a dry run plans only these namespaces compacted."""
        return replace(rules, compacted=frozenset(self.namespaces)) if rules.dry_run else rules

    def outcome(self, pruned: ThreadPruned) -> ThreadPruned:
        """The thread's outcome: the prune's, or, where a refusal left it as it was,
        why (`delta_not_compacted`)."""
        if not self.refused or pruned.pruned or pruned.skipped is not None:
            return pruned
        detail = "; ".join(self.refused)
        return ThreadPruned(pruned.thread_id, skipped="delta_not_compacted", detail=detail)


def snapshots(
    rebuilt: Rebuilt, found: Compaction, graph: GraphShape | None
) -> dict[str, Any] | str:
    """Each compacted channel's value at the head, as LangGraph rebuilds it (a
    `_DeltaSnapshot`): a message channel's by the message reducer, any other's by the
    graph's own channel (`--graph`); or why not (the plain prune then keeps its chain)."""
    stored = rebuilt.tup.checkpoint["channel_values"]
    values: dict[str, Any] = {}
    for name in sorted(found.channels):
        if name in rebuilt.names:
            value = stored[name]
        else:
            value = replayed_by_graph(rebuilt, name, found.checkpoint_ns, graph)
        if isinstance(value, str):
            return value
        values[name] = value
    return values


def replayed_by_graph(
    rebuilt: Rebuilt, name: str, checkpoint_ns: str, graph: GraphShape | None
) -> Any:
    """The snapshot of a delta channel that does not hold messages, replayed by the
    graph's channel of that name in the head's namespace; a str says why not."""
    if graph is None:
        return f"delta channel {name!r} does not hold messages: --graph lends the reducer"
    where = graph_at(graph, checkpoint_ns)
    spec = where.delta_channels.get(name) if isinstance(where, GraphShape) else None
    history = rebuilt.rest.get(name)
    if spec is None:
        return f"the graph given has no delta channel {name!r} here: its reducer is not known"
    if history is None:
        return f"delta channel {name!r} was not rebuilt from the head"
    try:
        return as_snapshot(replayed(spec, history))
    except Exception as error:  # the application's reducer, on what the store holds
        return f"the graph's reducer failed on delta channel {name!r}: {one_line(error)}"


JS_NOT_COMPACTED = "a LangGraph.js thread: its snapshot would be written in Python's format"


def proven(before: Mapping[str, Any], after: tuple[Any, Mapping[str, Any]] | str | None) -> bool:
    """Whether the head, read again (`head_values`), rebuilds the same value of every
    compacted channel."""
    if not isinstance(after, tuple) or before.keys() != after[1].keys():
        return False
    return all(snapshot_value(before[k]) == snapshot_value(after[1][k]) for k in before)


def refused_by_store(compacted: Compacted, pruner: Any, found: Compaction) -> bool:
    """Whether the store's pruner says why it compacts nothing (a Redis store: its
    saver's put would point the thread at the snapshot); said once per namespace."""
    why = getattr(pruner, "not_compacted", None)
    if why:
        compacted.refuse(found, why)
    return bool(why)


def compact_thread(
    saver: BaseCheckpointSaver[Any],
    pruner: Any,
    run_id: str,
    thread_id: str,
    rules: PruneRules,
    graph: GraphShape | None = None,
) -> Compacted | ThreadPruned:
    """Compact the thread's delta namespaces (in a dry run, make every check a real run
    makes before writing); the thread's outcome when a snapshot did not prove (it is
    then left as it was)."""
    compacted = Compacted()
    for found in to_compact(pruner.thread_rows(thread_id), rules):
        if refused_by_store(compacted, pruner, found):
            continue
        read = compacted.to_write(found, head_values(saver, thread_id, found, graph), rules.dry_run)
        if read is None:
            continue
        head, values = read
        new = snapshot_under(head, found, values, saver.get_next_version, run_id)
        saver.put(new.config, new.checkpoint, new.metadata, new.new_versions)
        if not pruner.repoint(run_id, thread_id, found, rules.archive):
            pruner.revert(run_id, thread_id, found)  # another run moved the head's parent
            continue
        if not proven(values, head_values(saver, thread_id, found, graph)):
            pruner.revert(run_id, thread_id, found)
            return ThreadPruned(thread_id, skipped="compact_unproven")
        compacted.namespaces.add(found.checkpoint_ns)
    return compacted


def head_values(
    saver: BaseCheckpointSaver[Any], thread_id: str, found: Compaction, graph: GraphShape | None
) -> tuple[CheckpointTuple, dict[str, Any]] | str | None:
    """The head as stored, with each compacted channel's value at it as LangGraph
    rebuilds it (`snapshots`); None when the head is gone; why not, for a LangGraph.js
    head or a channel that cannot be rebuilt here."""
    head = saver.get_tuple(Head(thread_id, found.checkpoint_ns, found.head_id).config)
    if head is None or is_js_checkpoint(head.checkpoint):
        return _not_read(head)
    return _with_values(head, snapshots(read_rebuilt(saver, head, None), found, graph))


def _not_read(head: CheckpointTuple | None) -> str | None:
    return None if head is None else JS_NOT_COMPACTED


def _with_values(
    head: CheckpointTuple, values: dict[str, Any] | str
) -> tuple[CheckpointTuple, dict[str, Any]] | str:
    return values if isinstance(values, str) else (head, values)


async def acompact_thread(
    saver: BaseCheckpointSaver[Any],
    pruner: Any,
    run_id: str,
    thread_id: str,
    rules: PruneRules,
    graph: GraphShape | None = None,
) -> Compacted | ThreadPruned:
    """The async twin of `compact_thread`."""
    compacted = Compacted()
    for found in to_compact(await pruner.thread_rows(thread_id), rules):
        if refused_by_store(compacted, pruner, found):
            continue
        read = compacted.to_write(
            found, await ahead_values(saver, thread_id, found, graph), rules.dry_run
        )
        if read is None:
            continue
        head, values = read
        new = snapshot_under(head, found, values, saver.get_next_version, run_id)
        await saver.aput(new.config, new.checkpoint, new.metadata, new.new_versions)
        if not await pruner.repoint(run_id, thread_id, found, rules.archive):
            await pruner.revert(run_id, thread_id, found)
            continue
        if not proven(values, await ahead_values(saver, thread_id, found, graph)):
            await pruner.revert(run_id, thread_id, found)
            return ThreadPruned(thread_id, skipped="compact_unproven")
        compacted.namespaces.add(found.checkpoint_ns)
    return compacted


async def ahead_values(
    saver: BaseCheckpointSaver[Any], thread_id: str, found: Compaction, graph: GraphShape | None
) -> tuple[CheckpointTuple, dict[str, Any]] | str | None:
    """The async twin of `head_values`."""
    head = await saver.aget_tuple(Head(thread_id, found.checkpoint_ns, found.head_id).config)
    if head is None or is_js_checkpoint(head.checkpoint):
        return _not_read(head)
    rebuilt = await aread_rebuilt(saver, head, None)
    return _with_values(head, snapshots(rebuilt, found, graph))
