"""Sends of a checkpoint stored before format 4 (`v < 4`): LangGraph's PostgreSQL saver
rebuilds them, on every load, from the parent's `__pregel_tasks` writes. No repair of
ours may delete or hide them: a load through the wrapper hands them over as the saver
does, and the batch job leaves such a head in flight (a checkpoint on top would have
another parent, so the sends would be gone) and changes none of the thread's rows."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Send

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch import arepair_threads, repair_threads
from langgraph_checkpoint_repair.targets import aopen_saver

THREAD: RunnableConfig = {"configurable": {"thread_id": "legacy"}}
SENDS = [Send("tool", {"city": "Oslo"})]
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def seed_legacy(saver: PostgresSaver) -> None:
    """A `v: 3` head with an orphan tool result (a repair is due) whose parent holds the
    head's sends as `__pregel_tasks` writes, as LangGraph stored them before format 4."""
    config: Any = {"configurable": {"thread_id": "legacy", "checkpoint_ns": ""}}
    parent = empty_checkpoint()
    parent["v"] = 3
    first = saver.get_next_version(None, None)
    parent["channel_values"] = {"messages": [HumanMessage("hi", id="h1")]}
    parent["channel_versions"] = {"messages": first}
    parent_config = saver.put(config, parent, {"source": "loop", "step": 1}, {"messages": first})
    saver.put_writes(parent_config, [("__pregel_tasks", send) for send in SENDS], "task-1")
    head = empty_checkpoint()
    head["v"] = 3
    second = saver.get_next_version(first, None)
    orphan = ToolMessage("sunny", tool_call_id="nobody-asked", id="t1")
    head["channel_values"] = {"messages": [HumanMessage("hi", id="h1"), orphan]}
    head["channel_versions"] = {"messages": second}
    saver.put(parent_config, head, {"source": "loop", "step": 2}, {"messages": second})


def rows(uri: str) -> list[Any]:
    with psycopg.connect(uri) as conn:
        return [
            conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall() for table in TABLES
        ]


@pytest.fixture
def legacy_uri(pg_uri: str) -> str:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_legacy(saver)
    return pg_uri


def test_the_brick_is_real_the_head_loads_its_sends_from_the_parent(legacy_uri: str) -> None:
    with PostgresSaver.from_conn_string(legacy_uri) as saver:
        head = saver.get_tuple(THREAD)

    assert head is not None and head.checkpoint["v"] == 3
    assert head.checkpoint["channel_values"]["__pregel_tasks"] == SENDS


def test_a_load_through_the_wrapper_hands_over_the_sends(legacy_uri: str) -> None:
    with PostgresSaver.from_conn_string(legacy_uri) as saver:
        loaded = PatchingCheckpointer(saver).get_tuple(THREAD)

    assert loaded is not None
    assert loaded.checkpoint["channel_values"]["__pregel_tasks"] == SENDS
    assert [m.type for m in loaded.checkpoint["channel_values"]["messages"]] == ["human"]


def test_repair_leaves_the_head_in_flight_and_every_row_as_it_was(legacy_uri: str) -> None:
    before = rows(legacy_uri)
    with PostgresSaver.from_conn_string(legacy_uri) as saver:
        report = repair_threads(saver, min_idle=0)
        head = saver.get_tuple(THREAD)

    assert report.threads_repaired == 0 and report.skipped == {"in_flight": 1}
    assert rows(legacy_uri) == before
    assert head is not None and head.checkpoint["channel_values"]["__pregel_tasks"] == SENDS


async def test_the_async_run_leaves_it_too(legacy_uri: str) -> None:
    before = rows(legacy_uri)
    async with aopen_saver(legacy_uri) as saver:
        report = await arepair_threads(saver, min_idle=0)

    assert report.threads_repaired == 0 and report.skipped == {"in_flight": 1}
    assert rows(legacy_uri) == before
