"""`rewind_unreadable` (`docs/how-to/unreadable-threads.md`): a head whose stored bytes do not
decode gets a new head copying its newest readable ancestor, audited, and undone by copying the
unreadable row back, as stored. Real chat graphs on real SQLite and PostgreSQL
savers, sync and async; SQL cuts the stored bytes short."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.decisions.plan import DETAIL_KEY, RUN_KEY
from langgraph_checkpoint_repair.stores import astore_for, store_for
from tests.support.agents import chat_graph
from tests.support.batch_runs import run_repair, run_undo
from tests.support.rewind_threads import (
    all_rows,
    chat_turns,
    checkpoint_ids,
    cut,
    cut_all,
    family,
    raw_row,
    set_parent,
    sqlite_path,
)
from tests.support.seeding import config
from tests.support.stores import Store, open_store

KINDS = ["sqlite", "aiosqlite", "postgres", "apostgres"]
Opened = tuple[str, str, Store]


@pytest.fixture(params=KINDS)
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opened]:
    """A store's kind, where SQL reaches it, and the application's saver on it."""
    kind = request.param
    async with open_store(kind, tmp_path, request) as store:
        where = (
            sqlite_path(tmp_path) if family(kind) == "sqlite" else request.getfixturevalue("pg_uri")
        )
        yield kind, where, store


async def load_error(store: Store, thread_id: str) -> str:
    """The plain saver's error on loading the thread's head (it must fail)."""
    with pytest.raises(Exception) as raised:  # whatever the saver raises
        await store.get_tuple(store.saver, config(thread_id))
    return f"{type(raw := raised.value).__name__}: {raw}"


async def state_at(store: Store, thread_id: str, checkpoint_id: str | None = None) -> Any:
    graph = chat_graph(store.saver)
    where = config(thread_id)
    if checkpoint_id is not None:
        where["configurable"]["checkpoint_id"] = checkpoint_id
    return (await store.get_state(graph, where)).values


def entry(report: Any, thread_id: str) -> Any:
    (found,) = [t for t in report.threads if t.thread_id == thread_id]
    return found


async def two_cut_threads(opened: Opened) -> dict[str, list[str]]:
    """Thread `one` with its head cut, `two` with its head and parent cut; each thread's
    checkpoint ids (newest first) from before the cut."""
    kind, where, store = opened
    ids = {}
    for thread_id, back in (("one", (0,)), ("two", (0, 1))):
        await chat_turns(store, thread_id)
        ids[thread_id] = checkpoint_ids(kind, where, thread_id)
        cut(kind, where, thread_id, *back)
    await chat_turns(store, "healthy", turns=1)
    return ids


async def test_without_the_flag_an_unreadable_head_is_reported_and_left_alone(
    opened: Opened,
) -> None:
    kind, where, store = opened
    await two_cut_threads(opened)
    before = all_rows(kind, where)
    report = await run_repair(store)
    assert all_rows(kind, where) == before
    assert report.skipped == {"unreadable": 2}
    assert entry(report, "one").rewind is None
    assert "checkpoints_passed_over" not in report.to_json()


async def test_a_dry_run_says_what_it_would_rewind_and_writes_nothing(opened: Opened) -> None:
    kind, where, store = opened
    ids = await two_cut_threads(opened)
    before = all_rows(kind, where)
    report = await run_repair(store, dry_run=True, rewind_unreadable=True)
    assert all_rows(kind, where) == before
    assert report.threads_repaired == 2 and report.actions == {"rewound": 2}
    two = entry(report, "two")
    assert two.outcome == "would_repair"
    assert two.rewind == {"rewound_to": ids["two"][2], "passed_over": 2}
    assert two.codes == ["rewound", "undecodable"]
    assert report.to_json()["checkpoints_passed_over"] == 3


async def test_a_rewind_loads_again_and_its_undo_brings_the_unreadable_head_back(
    opened: Opened,
) -> None:
    kind, where, store = opened
    ids = await two_cut_threads(opened)
    errors = {t: await load_error(store, t) for t in ids}
    report = await run_repair(store, rewind_unreadable=True)
    assert report.threads_repaired == 2 and report.checkpoints_written == 2
    assert report.to_json()["actions"] == {"rewound": 2}
    assert report.to_json()["checkpoints_passed_over"] == 3
    for thread_id, passed in (("one", 1), ("two", 2)):
        ancestor = ids[thread_id][passed]
        assert entry(report, thread_id).rewind == {"rewound_to": ancestor, "passed_over": passed}
        assert await state_at(store, thread_id) == await state_at(store, thread_id, ancestor)
        head = await store.get_tuple(store.saver, config(thread_id))
        assert head is not None and head.parent_config is not None
        metadata: dict[str, Any] = dict(head.metadata)
        assert metadata[RUN_KEY] == report.run_id
        assert metadata[DETAIL_KEY] == {
            "kind": "rewind",
            "source_checkpoint_id": ids[thread_id][0],
            "rewound_to": ancestor,
            "passed_over": passed,
        }
        assert head.parent_config["configurable"]["checkpoint_id"] == ids[thread_id][0]
    if family(kind) == "postgres":
        assert audit_actions(where, report.run_id, "two") == [
            {
                "kind": "rewound",
                "tool_call_id": None,
                "tool_name": None,
                "index": 0,
                "detail": f"to {ids['two'][2]}, passing over 2",
            }
        ]
    again = await run_repair(store, rewind_unreadable=True)
    assert again.threads_repaired == 0 and again.skipped == {} and again.actions == {}

    undone = await run_undo(store, report.run_id)
    assert undone.threads_restored == 2 and undone.errors == []
    for thread_id in ids:
        assert await load_error(store, thread_id) == errors[thread_id]
        head_id = checkpoint_ids(kind, where, thread_id)[0]
        assert same_apart_from_ids(
            kind, raw_row(kind, where, thread_id, ids[thread_id][0]),
            raw_row(kind, where, thread_id, head_id),
        )  # fmt: skip
    twice = await run_undo(store, report.run_id)
    assert twice.threads_restored == 0
    assert {s["reason"] for s in twice.skipped} == {"claimed"}


async def test_the_graph_runs_on_a_rewound_thread_and_its_write_wins_over_undo(
    opened: Opened,
) -> None:
    kind, where, store = opened
    await chat_turns(store, "busy")
    cut(kind, where, "busy", 0)
    report = await run_repair(store, rewind_unreadable=True)
    graph = chat_graph(store.saver)
    await store.invoke(graph, {"messages": [HumanMessage("still there?")]}, config("busy"))
    messages = (await state_at(store, "busy"))["messages"]
    assert [m.content for m in messages[-2:]] == ["still there?", "hi"]
    undone = await run_undo(store, report.run_id)
    assert undone.threads_restored == 0
    assert undone.skipped == [{"thread_id": "busy", "checkpoint_ns": "", "reason": "moved_on"}]
    assert (await state_at(store, "busy"))["messages"] == messages


async def test_a_thread_with_no_readable_checkpoint_is_reported_and_left_alone(
    opened: Opened,
) -> None:
    kind, where, store = opened
    await chat_turns(store, "lost", turns=2)
    cut_all(kind, where, "lost")
    before = all_rows(kind, where)
    report = await run_repair(store, rewind_unreadable=True)
    assert all_rows(kind, where) == before
    lost = entry(report, "lost")
    assert lost.outcome == "unreadable"
    assert lost.rewind["reason"] == "no_readable_ancestor" and lost.rewind["rewound_to"] is None
    assert report.skipped == {"unreadable": 1}


async def test_a_cyclic_parent_chain_is_reported_not_walked(opened: Opened) -> None:
    kind, where, store = opened
    await chat_turns(store, "loop", turns=2)
    ids = checkpoint_ids(kind, where, "loop")
    cut(kind, where, "loop", 0, 1)
    set_parent(kind, where, "loop", ids[1], ids[0])  # the parent's parent is the head
    report = await run_repair(store, rewind_unreadable=True)
    loop = entry(report, "loop")
    assert loop.outcome == "unreadable"
    assert loop.rewind == {"rewound_to": None, "passed_over": 2, "reason": "broken_chain"}


def test_a_saver_with_only_the_api_does_not_rewind() -> None:
    """The public API cannot copy bytes it cannot decode, so it could not undo a rewind:
    there `rewind_unreadable` leaves an unreadable head reported, as without it."""
    saver = InMemorySaver()
    assert store_for(saver).rewinds is False and astore_for(saver).rewinds is False
    graph = chat_graph(saver)
    graph.invoke({"messages": [HumanMessage("hello")]}, config("mem"))
    report = repair_threads(saver, min_idle=0, rewind_unreadable=True)
    assert report.threads_scanned == 1 and report.actions == {}


def audit_actions(where: str, run_id: str, thread_id: str) -> Any:
    """A rewind's recorded actions in PostgreSQL's audit table (SQLite keeps its audit in
    the checkpoint's metadata)."""
    with psycopg.connect(where) as pg:
        query = "SELECT actions FROM langgraph_repair_threads WHERE run_id = %s AND thread_id = %s"
        (row,) = pg.execute(query, (run_id, thread_id)).fetchall()
    return row[0]["__checkpoint__"]


def same_apart_from_ids(kind: str, original: tuple[Any, ...], copy: tuple[Any, ...]) -> bool:
    """The copy holds the original's stored bytes: its type and checkpoint (on PostgreSQL
    apart from the checkpoint's own id) and its metadata (apart from the undo's record)."""
    type_, checkpoint, metadata = original
    copied_type, copied_checkpoint, copied_metadata = copy
    if family(kind) == "sqlite":
        metadata, copied_metadata = json.loads(metadata), json.loads(copied_metadata)
        same_checkpoint = bytes(checkpoint) == bytes(copied_checkpoint)
    else:
        same_checkpoint = {**checkpoint, "id": None} == {**copied_checkpoint, "id": None}
    assert copied_metadata.pop(DETAIL_KEY)["kind"] == "undo" and copied_metadata.pop(RUN_KEY)
    return type_ == copied_type and same_checkpoint and metadata == copied_metadata
