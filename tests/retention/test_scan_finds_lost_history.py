"""Threads someone else's prune already damaged: `scan` finds a delta channel whose walk
ends before its seed (`delta_seed_missing`) and, on PostgreSQL, a head naming a blob that
is gone (`blob_missing`). Both are reported with what LangGraph does with them, and a
repair never writes on them; healthy threads, pruned by us or not, are not flagged."""

from __future__ import annotations

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.batch import RunReport
from tests.retention.test_prune_delta_threads import keep_only_the_newest, talked
from tests.support.batch_runs import run_repair
from tests.support.delta_agents import delta_chat
from tests.support.pruning import PrunedStore, execute, plain_chat, prune, stored_rows, thread


def lost(report: RunReport) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Each thread the run reported, with its outcome and its findings' (code, channel)."""
    return {
        t.thread_id: (t.outcome, [(f["code"], f["channel"]) for f in t.findings or []])
        for t in report.threads
    }


async def test_scan_finds_a_delta_thread_cut_by_hand_and_repair_leaves_it(
    store: PrunedStore,
) -> None:
    graph = await talked(store, "pruned", 6)
    await prune(store)  # ours keeps each chain back to its seed
    await talked(store, "whole", 6)
    await talked(store, "cut", 4)
    keep_only_the_newest(store, "cut")
    assert (await store.get_state(graph, thread("cut"))).values.get("messages", []) == []

    scan = await run_repair(store, dry_run=True)

    assert lost(scan) == {"cut": ("history_lost", [("delta_seed_missing", "messages")])}
    assert scan.findings == {"delta_seed_missing": 1}
    assert dict(scan.skipped) == {"history_lost": 1}
    found = scan.threads[0].findings or []
    assert "forgets its history" in found[0]["error"]

    before = stored_rows(store.reader)
    repair = await run_repair(store)
    assert repair.threads_repaired == 0
    assert stored_rows(store.reader) == before


async def test_a_delta_thread_started_by_update_state_is_not_flagged(
    store: PrunedStore,
) -> None:
    graph = delta_chat(store.saver)
    await store.update_state(graph, thread("updated"), {"messages": [HumanMessage("set")]})
    await store.invoke(graph, {"messages": [HumanMessage("on")]}, thread("updated"))
    assert len((await store.get_state(graph, thread("updated"))).values["messages"]) == 3

    scan = await run_repair(store, dry_run=True)

    assert lost(scan) == {}
    assert not scan.findings


def drop_head_blob(store: PrunedStore, thread_id: str) -> None:
    """What a hand-written cleanup of blobs does: the head's `messages` blob deleted."""
    (versions,) = execute(
        store.reader,
        "SELECT checkpoint -> 'channel_versions' FROM checkpoints WHERE thread_id = ? "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread_id,),
    )[0]
    execute(
        store.reader,
        "DELETE FROM checkpoint_blobs WHERE thread_id = ? AND channel = 'messages' AND version = ?",
        (thread_id, versions["messages"]),
    )


async def test_scan_finds_a_head_whose_messages_blob_is_gone(store: PrunedStore) -> None:
    if not isinstance(store.reader, PostgresSaver):
        pytest.skip("SQLite stores a checkpoint's values in its own row: no blob can go")
    graph = plain_chat(store.saver)
    for thread_id in ("kept", "gone"):
        for turn in range(2):
            await store.invoke(graph, {"messages": [HumanMessage(f"{turn}")]}, thread(thread_id))
    drop_head_blob(store, "gone")
    keep_only_the_newest(store, "gone")  # no older row to rebuild it from either
    assert (await store.get_state(graph, thread("gone"))).values.get("messages", []) == []

    scan = await run_repair(store, dry_run=True)

    assert lost(scan) == {"gone": ("history_lost", [("blob_missing", "messages")])}
    assert scan.findings == {"blob_missing": 1}
    found = scan.threads[0].findings or []
    assert "empty" in found[0]["error"]
    before = stored_rows(store.reader)
    await run_repair(store)
    assert stored_rows(store.reader) == before
