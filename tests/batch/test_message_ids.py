"""Messages without an id in a delta channel's history, on every real saver: a stock
`create_deep_agent` stores `[("user", ...)]` as a 2-list and a plain string as a
string (an older reducer stored messages with `id=None`); every read hands them back
without an id, so no `RemoveMessage` can name them. `scan` finds them
(`message_id_missing`). On PostgreSQL and SQLite `repair` stamps ids derived from the
rows into those writes in place; elsewhere, and where the messages lie in a stored
snapshot, it appends a snapshot with ids given. Two reads then give the same ids, a
removal by the id read works, the agent goes on, undo puts the thread back (the rows
byte for byte), and a repair after the undo gives the same ids again."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from typing import Any

from langchain_core.messages import HumanMessage, RemoveMessage

from langgraph_checkpoint_repair.stores import astore_for, store_for
from tests.batch.test_delta_diverged import ids
from tests.support.agents import ToolBox
from tests.support.batch_runs import all_checkpoints, run_repair, run_undo
from tests.support.delta_agents import deep_agent, delta_agent, delta_chat, messages_of
from tests.support.delta_damage import write_without_ids
from tests.support.fakes import model
from tests.support.seeding import config
from tests.support.stores import Store

REWRITES = {"sqlite", "aiosqlite", "postgres", "apostgres"}
"""The savers whose store the batch job rewrites writes in place on."""
LACKING = ["a pair", "a string", "no id"]


async def id_less_thread(store: Store, young: bool = True, thread_id: str = "no-ids") -> None:
    """Input given as a (role, content) pair and as a string, then a step whose write
    holds a message with `id=None`: to a stock deep agent (a snapshot every 50 updates:
    the writes hold them), or to a graph snapshotting every 3 (a snapshot holds them)."""
    replies = model("One.", "Two.", "Three.")
    agent = (
        deep_agent(replies, ToolBox(), store.saver)
        if young
        else delta_agent(replies, ToolBox(), store.saver)
    )
    await store.invoke(agent, {"messages": [("user", "a pair")]}, config(thread_id))
    await store.invoke(agent, {"messages": "a string"}, config(thread_id))
    await write_without_ids(store, thread_id, [HumanMessage("no id")])


async def history(store: Store, thread_id: str = "no-ids") -> list[Any]:
    return await messages_of(store, deep_agent(model(), ToolBox(), store.saver), config(thread_id))


async def write_rows(store: Store) -> list[Any]:
    """Every stored value of every checkpoint, as its bytes (to prove undo byte for byte)."""
    rows: list[Any] = []
    for key in await all_checkpoints(store):
        if store.is_async:
            rows.append((key, await astore_for(store.saver).stored_values(key)))
        else:
            rows.append((key, store_for(store.saver).stored_values(key)))
    return rows


def in_place(request: pytest.FixtureRequest) -> bool:
    return request.node.callspec.params["store"] in REWRITES


@pytest.mark.parametrize("young", [True, False], ids=["in-writes", "in-a-snapshot"])
async def test_messages_without_ids_are_found_given_ids_and_can_be_removed(
    store: Store, request: pytest.FixtureRequest, young: bool
) -> None:
    await id_less_thread(store, young)
    first, second = await history(store), await history(store)
    assert [m.content for m in first if m.id is None] == LACKING
    assert ids(first) == ids(second)  # None, each time: nothing can name them

    listed = await all_checkpoints(store)
    dry = await run_repair(store, dry_run=True)
    assert dry.findings == {"message_id_missing": 1}
    assert [t.outcome for t in dry.threads] == ["would_repair"]
    assert await all_checkpoints(store) == listed

    report = await run_repair(store)
    stamped_in_place = young and in_place(request)
    written = (0, 3) if stamped_in_place else (1, 0)
    assert (report.checkpoints_written, report.writes_rewritten) == written
    assert report.actions == {"message_id_stamped": 3}
    given = ids(await history(store))
    assert None not in given and given == ids(await history(store))
    assert (await run_repair(store, dry_run=True)).findings == {}

    pair = next(m for m in await history(store) if m.content == "a pair")
    removal = {"messages": [RemoveMessage(id=pair.id)]}
    await store.update_state(delta_chat(store.saver), config("no-ids"), removal, "chat")
    assert "a pair" not in [m.content for m in await history(store)]
    agent = deep_agent(model("Still here."), ToolBox(), store.saver)
    result = await store.invoke(agent, {"messages": [HumanMessage("Hi?")]}, config("no-ids"))
    assert result["messages"][-1].content == "Still here."


@pytest.mark.parametrize("young", [True, False], ids=["in-writes", "in-a-snapshot"])
async def test_undo_puts_the_thread_back_and_a_second_repair_gives_the_same_ids(
    store: Store, request: pytest.FixtureRequest, young: bool
) -> None:
    await id_less_thread(store, young)
    before = await write_rows(store)
    report = await run_repair(store)
    given = ids(await history(store))

    undone = await run_undo(store, report.run_id)
    if young and in_place(request):
        assert undone.writes_restored == 3
        assert await write_rows(store) == before
    else:
        assert undone.threads_restored == 1
    assert [m.content for m in await history(store) if m.id is None] == LACKING
    await run_repair(store)
    assert ids(await history(store)) == given


async def test_a_healthy_delta_thread_has_no_such_finding(store: Store) -> None:
    agent = delta_agent(model("One.", "Two."), ToolBox(), store.saver)
    for text in ("Hi", "Again"):
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config("ids"))
    report = await run_repair(store, dry_run=True)
    assert (report.findings, report.threads) == ({}, [])
