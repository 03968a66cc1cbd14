"""The batch job on every real saver (generic path on memory, SQLite, PostgreSQL fast
path; sync and async): what it finds, what it writes, what it leaves alone."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from langgraph_checkpoint_repair.decisions.plan import DETAIL_KEY, RUN_KEY
from tests.support.agents import ToolBox, chat_graph, react_agent
from tests.support.batch_runs import all_checkpoints, head_messages, run_repair, run_undo
from tests.support.fakes import model
from tests.support.oracle import assert_valid, violations
from tests.support.seeding import SUBGRAPH_HISTORY, config, seed
from tests.support.stores import Store


async def test_dry_run_reports_what_a_run_would_do_and_writes_nothing(store: Store) -> None:
    seeded = await seed(store)
    before = await all_checkpoints(store)
    report = await run_repair(store, dry_run=True)
    assert await all_checkpoints(store) == before
    shown = report.to_json() | {"run_id": None}
    listing = shown.pop("listed_by_saver", None)  # only the saver's API shows a listing
    through_api = isinstance(store.saver, InMemorySaver)
    assert listing == (
        {"checkpoints": 21, "threads": 7, "may_be_capped": False} if through_api else None
    )
    assert shown == {
        "run_id": None,
        "dry_run": True,
        "threads_scanned": 7,
        "threads_needing_repair": 5,
        "threads_repaired": 5,
        "checkpoints_written": 5,
        "writes_rewritten": 0,
        "skipped": {"in_flight": 1},
        "actions": {"moved": 1, "orphan_dropped": 1, "placeholder": 3},
        "errors": [],
        "refused_types": [],
    }
    broken = {(t.thread_id, t.outcome) for t in report.threads}
    assert broken == {(t, "would_repair") for t in seeded.broken} | {
        (seeded.of("in_flight")[0], "in_flight")
    }


async def test_repair_appends_one_checkpoint_per_broken_thread(store: Store) -> None:
    seeded = await seed(store)
    before = await all_checkpoints(store)
    report = await run_repair(store)
    after = await all_checkpoints(store)
    assert set(before) <= set(after)
    assert len(after) - len(before) == report.checkpoints_written == 5
    assert report.threads_repaired == 5
    for thread_id in seeded.of("bricked", "orphan", "misplaced"):
        assert_valid(await head_messages(store, thread_id))
    assert_valid(await head_messages(store, seeded.of("subgraph")[0], "researcher:1"))
    in_flight = await head_messages(store, seeded.of("in_flight")[0])
    assert in_flight[-1].tool_calls


async def test_repair_checkpoint_reads_like_an_update(store: Store) -> None:
    seeded = await seed(store, bricked=1)
    report = await run_repair(store)
    tup = await store.get_tuple(store.saver, config(seeded.of("bricked")[0]))
    assert tup is not None and tup.parent_config is not None
    metadata: dict[str, Any] = dict(tup.metadata)
    assert metadata["source"] == "update"
    assert metadata[RUN_KEY] == report.run_id
    detail = metadata[DETAIL_KEY]
    assert detail["kind"] == "repair"
    assert detail["source_checkpoint_id"] == tup.parent_config["configurable"]["checkpoint_id"]
    assert [a["kind"] for a in detail["actions"]["messages"]] == ["placeholder"]
    parent = await store.get_tuple(store.saver, tup.parent_config)
    assert parent is not None
    assert tup.metadata["step"] == parent.metadata["step"] + 1


async def test_a_second_run_finds_nothing(store: Store) -> None:
    await seed(store)
    await run_repair(store)
    before = await all_checkpoints(store)
    again = await run_repair(store)
    assert again.threads_needing_repair == 0
    assert again.checkpoints_written == 0
    assert again.skipped == {"in_flight": 1}
    assert await all_checkpoints(store) == before


async def test_repaired_thread_runs_with_the_plain_saver(store: Store) -> None:
    seeded = await seed(store, bricked=1)
    await run_repair(store)
    replies = model("Here you go.")
    agent = react_agent(replies, ToolBox(), store.saver)
    out = await store.invoke(
        agent, {"messages": [HumanMessage("Hello?")]}, config(seeded.of("bricked")[0])
    )
    assert out["messages"][-1].content == "Here you go."
    assert_valid(replies.received[-1])


async def test_recent_threads_wait_for_min_idle(store: Store) -> None:
    await seed(store)
    before = await all_checkpoints(store)
    report = await run_repair(store, min_idle=timedelta(minutes=10))
    assert report.threads_needing_repair == 5
    assert report.threads_repaired == 0
    assert report.skipped == {"recent": 5, "in_flight": 1}
    assert await all_checkpoints(store) == before


async def test_thread_filter_and_limit(store: Store) -> None:
    seeded = await seed(store, bricked=3)
    only = await run_repair(store, dry_run=True, threads=seeded.of("bricked")[:2])
    assert only.threads_scanned == 2
    assert only.threads_needing_repair == 2
    limited = await run_repair(store, limit=2)
    assert limited.threads_repaired == 2
    rest = await run_repair(store)
    assert rest.threads_repaired == len(seeded.broken) - 2


async def test_undo_restores_and_skips_threads_that_moved_on(store: Store) -> None:
    seeded = await seed(store, bricked=2)
    originals = {t: await head_messages(store, t) for t in seeded.of("bricked", "misplaced")}
    report = await run_repair(store)
    moved_on = seeded.of("bricked")[0]
    agent = react_agent(model("Fine."), ToolBox(), store.saver)
    await store.invoke(agent, {"messages": [HumanMessage("Hi again")]}, config(moved_on))
    before = await all_checkpoints(store)

    undo = await run_undo(store, report.run_id)
    assert (undo.threads_restored, undo.threads_skipped) == (4, 1)
    assert undo.skipped == [{"thread_id": moved_on, "checkpoint_ns": "", "reason": "moved_on"}]
    after = await all_checkpoints(store)
    assert set(before) <= set(after) and len(after) == len(before) + 4
    for thread_id, original in originals.items():
        if thread_id != moved_on:
            restored = await head_messages(store, thread_id)
            assert [m.model_dump() for m in restored] == [m.model_dump() for m in original]
            assert violations(restored)
    restored_subgraph = await head_messages(store, seeded.of("subgraph")[0], "researcher:1")
    assert [m.id for m in restored_subgraph] == [m.id for m in SUBGRAPH_HISTORY]


class RacingWrites:
    """Mixed into a real saver: right after the job loads the racer's head, another
    writer appends to that thread, as a live application would."""

    racer = ""

    def get_tuple(self, config: Any) -> Any:
        tup = super().get_tuple(config)  # type: ignore[misc]
        if (
            config["configurable"].get("checkpoint_id")
            and config["configurable"]["thread_id"] == self.racer
        ):
            self.racer = ""
            graph = chat_graph(self)
            graph.update_state(
                config_of(tup), {"messages": [HumanMessage("me again")]}, as_node="chat"
            )
        return tup


class RacingMemorySaver(RacingWrites, InMemorySaver):
    pass


class RacingPostgresSaver(RacingWrites, PostgresSaver):
    pass


def config_of(tup: Any) -> Any:
    return config(tup.config["configurable"]["thread_id"])


@pytest.mark.parametrize("kind", ["memory", "postgres"])
async def test_a_thread_that_moves_on_during_the_run_is_not_forked(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with contextlib.ExitStack() as stack:
        if kind == "memory":
            saver: Any = RacingMemorySaver()
        else:
            uri = request.getfixturevalue("pg_uri")
            conn = stack.enter_context(
                psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row)
            )
            saver = RacingPostgresSaver(conn)
            saver.setup()
        store = Store(saver, is_async=False)
        seeded = await seed(store, bricked=1)
        saver.racer = seeded.of("bricked")[0]
        report = await run_repair(store)
        assert saver.racer == ""
        assert report.skipped["moved_on"] == 1
        repaired = {t.thread_id for t in report.threads if t.outcome == "repaired"}
        assert seeded.of("bricked")[0] not in repaired
        assert report.threads_repaired == len(seeded.broken) - 1
