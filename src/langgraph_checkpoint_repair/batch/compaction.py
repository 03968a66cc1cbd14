"""`prune --compact`'s writes: each delta namespace's snapshot put under its head and
proven, before the prune behind it deletes anything (`retention.compact`).

The snapshot holds each delta channel's value at the head as LangGraph rebuilds it, and
is written by the store's own saver, so in the thread's own format. Once the head points
at it, the head is rebuilt again by LangGraph's walk: the same messages, or the head is
pointed back, the snapshot deleted and the thread left as it was (`compact_unproven`).
A LangGraph.js thread is not compacted (its snapshot would be written in Python's
format) and is pruned as any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..delta import snapshot_value
from ..js.rows import is_js_checkpoint
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


def snapshots(rebuilt: Any, found: Compaction) -> dict[str, Any] | None:
    """Each compacted channel's value at the head, as rebuilt (a `_DeltaSnapshot`); None
    when one of them does not hold messages (the plain prune then keeps its chain)."""
    if not found.channels <= set(rebuilt.names):
        return None
    values = rebuilt.tup.checkpoint["channel_values"]
    return {name: values[name] for name in found.channels}


def proven(before: Mapping[str, Any], after: tuple[Any, Mapping[str, Any]] | None) -> bool:
    """Whether the head, read again (`head_values`), rebuilds the same messages."""
    if after is None or before.keys() != after[1].keys():
        return False
    return all(snapshot_value(before[k]) == snapshot_value(after[1][k]) for k in before)


def compact_thread(
    saver: BaseCheckpointSaver[Any], pruner: Any, run_id: str, thread_id: str, rules: PruneRules
) -> ThreadPruned | bool:
    """Compact the thread's delta namespaces: whether any was (in a dry run, would be),
    or the thread's outcome when a snapshot did not prove (it is then left as it was)."""
    planned = to_compact(pruner.thread_rows(thread_id), rules)
    if rules.dry_run:
        return bool(planned)
    done = False
    for found in planned:
        if (read := head_values(saver, thread_id, found)) is None:
            continue
        head, values = read
        new = snapshot_under(head, found, values, saver.get_next_version, run_id)
        saver.put(new.config, new.checkpoint, new.metadata, new.new_versions)
        if not pruner.repoint(run_id, thread_id, found, rules.archive):
            pruner.revert(run_id, thread_id, found)  # another run moved the head's parent
            continue
        if not proven(values, head_values(saver, thread_id, found)):
            pruner.revert(run_id, thread_id, found)
            return ThreadPruned(thread_id, skipped="compact_unproven")
        done = True
    return done


def head_values(
    saver: BaseCheckpointSaver[Any], thread_id: str, found: Compaction
) -> tuple[CheckpointTuple, dict[str, Any]] | None:
    """The head as stored, with each compacted channel's value at it as LangGraph
    rebuilds it; None when the head is gone or LangGraph.js's, or a channel does not
    hold messages."""
    head = saver.get_tuple(Head(thread_id, found.checkpoint_ns, found.head_id).config)
    if head is None or is_js_checkpoint(head.checkpoint):
        return None
    values = snapshots(read_rebuilt(saver, head, None), found)
    return None if values is None else (head, values)


async def acompact_thread(
    saver: BaseCheckpointSaver[Any], pruner: Any, run_id: str, thread_id: str, rules: PruneRules
) -> ThreadPruned | bool:
    """The async twin of `compact_thread`."""
    planned = to_compact(await pruner.thread_rows(thread_id), rules)
    if rules.dry_run:
        return bool(planned)
    done = False
    for found in planned:
        if (read := await ahead_values(saver, thread_id, found)) is None:
            continue
        head, values = read
        new = snapshot_under(head, found, values, saver.get_next_version, run_id)
        await saver.aput(new.config, new.checkpoint, new.metadata, new.new_versions)
        if not await pruner.repoint(run_id, thread_id, found, rules.archive):
            await pruner.revert(run_id, thread_id, found)
            continue
        if not proven(values, await ahead_values(saver, thread_id, found)):
            await pruner.revert(run_id, thread_id, found)
            return ThreadPruned(thread_id, skipped="compact_unproven")
        done = True
    return done


async def ahead_values(
    saver: BaseCheckpointSaver[Any], thread_id: str, found: Compaction
) -> tuple[CheckpointTuple, dict[str, Any]] | None:
    """The async twin of `head_values`."""
    head = await saver.aget_tuple(Head(thread_id, found.checkpoint_ns, found.head_id).config)
    if head is None or is_js_checkpoint(head.checkpoint):
        return None
    values = snapshots(await aread_rebuilt(saver, head, None), found)
    return None if values is None else (head, values)
