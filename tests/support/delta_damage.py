"""Delta histories damaged the way the field damaged them, written through the saver's
own `put` and `put_writes`: an update that committed `messages: []` over the thread's
history (langgraph#8653), and a snapshot stored flattened, as a list holding the list
of messages (langgraph-redis before 0.5.2, AgentCore's patch)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import CheckpointTuple, copy_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from tests.support.seeding import config
from tests.support.stores import Store

DELTA = object()
"""Store nothing for the channel, as a delta channel's step does."""


async def commit_on_head(
    store: Store,
    thread_id: str,
    stored: Any,
    writes: list[Any] | None = None,
    source: str = "update",
) -> CheckpointTuple:
    """Append a checkpoint over the head storing `stored` for `messages` (nothing, for
    `DELTA`), the update's `writes` saved on the head as LangGraph saves an update's
    writes; returns the head it was written over."""
    saver = store.saver
    head = await store.get_tuple(saver, config(thread_id))
    assert head is not None
    if writes:
        pending = [("messages", writes)]
        if store.is_async:
            await saver.aput_writes(head.config, pending, "damaged-update")
        else:
            saver.put_writes(head.config, pending, "damaged-update")
    checkpoint = copy_checkpoint(head.checkpoint)
    checkpoint["id"] = str(uuid6(clock_seq=-2))
    version = saver.get_next_version(checkpoint["channel_versions"].get("messages"), None)
    checkpoint["channel_versions"]["messages"] = version
    values = {k: v for k, v in checkpoint["channel_values"].items() if k != "messages"}
    checkpoint["channel_values"] = values if stored is DELTA else {**values, "messages": stored}
    metadata: Any = {"source": source, "step": int(head.metadata.get("step", 0)) + 1}
    metadata["parents"] = {}
    if stored is DELTA:  # counted as LangGraph counts a delta step since the last snapshot
        counters = dict(head.metadata.get("counters_since_delta_snapshot") or {})
        updates, steps = counters.get("messages", (0, 0))
        metadata["counters_since_delta_snapshot"] = {
            **counters,
            "messages": [updates + 1, steps + 1],
        }
    if store.is_async:
        await saver.aput(head.config, checkpoint, metadata, {"messages": version})
    else:
        saver.put(head.config, checkpoint, metadata, {"messages": version})
    return head


async def erase_history(store: Store, thread_id: str, written: list[BaseMessage]) -> None:
    """An `update_state` that committed an empty snapshot over the thread's messages."""
    await commit_on_head(store, thread_id, _DeltaSnapshot([]), written)


async def store_flattened(store: Store, thread_id: str, messages: list[BaseMessage]) -> None:
    """A snapshot of `messages` stored as a plain list holding that list."""
    await commit_on_head(store, thread_id, [list(messages)], source="loop")


async def write_without_ids(store: Store, thread_id: str, written: list[Any]) -> None:
    """A step whose saved write holds `written` as given (messages with `id=None`, say),
    as an older reducer stored its input, under a checkpoint storing nothing for it."""
    await commit_on_head(store, thread_id, DELTA, written, source="loop")


async def unseal_fork(store: Store, fork: CheckpointTuple, parent: CheckpointTuple) -> None:
    """Store `fork` again as LangGraph before 1.2.19 stored a fork: nothing for
    `messages` (no seal), so every read below it walks into its parent's writes, the
    abandoned branch's included (langgraph#8443)."""
    saver = store.saver
    checkpoint = copy_checkpoint(fork.checkpoint)
    values = checkpoint["channel_values"]
    checkpoint["channel_values"] = {k: v for k, v in values.items() if k != "messages"}
    version = saver.get_next_version(parent.checkpoint["channel_versions"]["messages"], None)
    checkpoint["channel_versions"]["messages"] = version
    assert fork.parent_config is not None
    if store.is_async:
        await saver.aput(fork.parent_config, checkpoint, fork.metadata, {"messages": version})
    else:
        saver.put(fork.parent_config, checkpoint, fork.metadata, {"messages": version})
