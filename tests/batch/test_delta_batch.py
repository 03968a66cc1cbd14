"""The batch job on delta message channels, on every real saver: it finds what LangGraph
rebuilds, stores the repair as a snapshot the plain saver reads, and undoes it exactly."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.delta import COUNTERS_KEY, is_snapshot
from langgraph_checkpoint_repair.stores import Selection, store_for
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from tests.support.agents import ToolBox, synthetic_results
from tests.support.batch_runs import all_checkpoints, run_repair, run_undo
from tests.support.cloning import clone_name, clone_postgres, clone_sqlite
from tests.support.delta_agents import (
    VALID_UPDATES,
    brick_delta_agent,
    deep_agent,
    delta_agent,
    delta_chat,
    messages_of,
)
from tests.support.fakes import ProviderRejected, calls, model
from tests.support.histories import ai, human, tool
from tests.support.oracle import assert_valid, violations
from tests.support.postgres_threads import encrypted, postgres
from tests.support.seeding import config
from tests.support.stores import Store


@dataclass
class DeltaThreads:
    """Delta-channel threads by what is wrong with them."""

    broken: list[str] = field(default_factory=list)
    clean: list[str] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)


async def brick_deep_agent(store: Store, thread_id: str) -> None:
    """A reused `call_0` after an approved turn, then new input: deepagents lets it through."""
    replies = model(
        calls(("get_weather", "call_0"), city="Oslo"), "Sunny in Oslo.",
        calls(("get_weather", "call_0"), city="Rome"),
    )  # fmt: skip
    agent = deep_agent(replies, ToolBox(), store.saver, interrupt_on={"get_weather": True})
    approve: Command[Any] = Command(resume={"decisions": [{"type": "approve"}]})
    await store.invoke(agent, {"messages": [HumanMessage("Weather in Oslo?")]}, config(thread_id))
    await store.invoke(agent, approve, config(thread_id))
    await store.invoke(agent, {"messages": [HumanMessage("And Rome?")]}, config(thread_id))
    try:
        await store.invoke(agent, {"messages": [HumanMessage("Never mind.")]}, config(thread_id))
    except ProviderRejected:
        return
    raise AssertionError("the deep agent was expected to fail")


async def seed_delta(store: Store) -> DeltaThreads:
    threads = DeltaThreads()
    for reducer in ("langgraph", "deepagents"):
        await brick_delta_agent(store, reducer, config(f"bricked-{reducer}"))
        threads.broken.append(f"bricked-{reducer}")
    await brick_deep_agent(store, "deep-agent")
    threads.broken.append("deep-agent")
    chat = delta_chat(store.saver)
    await store.update_state(
        chat, config("snapshot-only"), {"messages": [human("a"), tool("zz")]}, "chat"
    )
    threads.broken.append("snapshot-only")
    reset = [RemoveMessage(id=REMOVE_ALL_MESSAGES), human("b"), ai("b1", "c1"), human("c")]
    await store.update_state(
        chat, config("reset"), {"messages": [human("a"), ai("a1", "c0")]}, "chat"
    )
    await store.update_state(chat, config("reset"), {"messages": [human("x")]}, "chat")
    await store.update_state(chat, config("reset"), {"messages": reset}, "chat")
    threads.broken.append("reset")
    replies = model("Hello.", calls(("get_weather", "c1"), city="Oslo"), "Sunny.")
    agent = delta_agent(replies, ToolBox(), store.saver)
    for text in ("Hi", "Weather?"):
        await store.invoke(agent, {"messages": [HumanMessage(text)]}, config("clean"))
    threads.clean.append("clean")
    waiting = delta_agent(
        model(calls(("get_weather", "c1"), city="Oslo")), ToolBox(), store.saver,
        interrupt_before=["tools"],
    )  # fmt: skip
    await store.invoke(waiting, {"messages": [HumanMessage("Weather?")]}, config("in-flight"))
    threads.in_flight.append("in-flight")
    return threads


async def raw_messages(store: Store, thread_id: str) -> list[BaseMessage]:
    """The head's history as LangGraph rebuilds it with the plain saver."""
    return await messages_of(store, delta_chat(store.saver), config(thread_id))


async def test_scan_finds_every_broken_delta_thread(store: Store) -> None:
    threads = await seed_delta(store)
    before = await all_checkpoints(store)
    report = await run_repair(store, dry_run=True)
    assert await all_checkpoints(store) == before
    assert report.threads_needing_repair == len(threads.broken)
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes == {t: "would_repair" for t in threads.broken} | {"in-flight": "in_flight"}


async def test_repair_stores_a_snapshot_the_plain_saver_reads(store: Store) -> None:
    threads = await seed_delta(store)
    stored_before = {t: await raw_messages(store, t) for t in threads.broken}
    report = await run_repair(store)
    assert report.threads_repaired == report.checkpoints_written == len(threads.broken)
    assert report.skipped == {"in_flight": 1}
    for thread_id in threads.broken:
        repaired = await raw_messages(store, thread_id)
        assert_valid(repaired)
        real = [m.id for m in repaired if not synthetic_results([m])]
        assert real == [m.id for m in stored_before[thread_id] if m.id in real]
        head = await store.get_tuple(store.saver, config(thread_id))
        assert head is not None
        assert is_snapshot(head.checkpoint["channel_values"]["messages"])
        counters: Any = head.metadata.get(COUNTERS_KEY) or {}
        assert "messages" not in counters
    assert violations(await raw_messages(store, threads.in_flight[0])) != []
    again = await run_repair(store)
    assert (again.threads_needing_repair, again.threads_repaired) == (0, 0)


async def test_agents_continue_each_repaired_thread_with_the_plain_saver(store: Store) -> None:
    threads = await seed_delta(store)
    await run_repair(store)
    for thread_id in ("bricked-langgraph", "bricked-deepagents"):
        reducer = thread_id.removeprefix("bricked-")
        agent = delta_agent(model("A joke.", "Another."), ToolBox(), store.saver, reducer=reducer)
        for text in ("A joke?", "Another?"):  # the second run replays on top of the snapshot
            result = await store.invoke(
                agent, {"messages": [HumanMessage(text)]}, config(thread_id)
            )
            assert_valid(result["messages"])
    deep = deep_agent(model("Here is a joke."), ToolBox(), store.saver)
    result = await store.invoke(deep, {"messages": [HumanMessage("A joke?")]}, config("deep-agent"))
    assert result["messages"][-1].content == "Here is a joke."
    assert_valid(result["messages"])
    assert threads.broken


async def test_undo_restores_exactly_what_was_there(store: Store) -> None:
    threads = await seed_delta(store)
    before = {t: await raw_messages(store, t) for t in threads.broken}
    report = await run_repair(store)
    undone = await run_undo(store, report.run_id)
    assert (undone.threads_restored, undone.threads_skipped) == (len(threads.broken), 0)
    for thread_id in threads.broken:
        restored = await raw_messages(store, thread_id)
        assert [m.model_dump() for m in restored] == [m.model_dump() for m in before[thread_id]]
    rescan = await run_repair(store, dry_run=True)
    assert rescan.threads_needing_repair == len(threads.broken)


async def seed_clean_delta(store: Store) -> list[str]:
    """Valid delta threads of every shape the replay must follow exactly."""
    names = []
    for reducer in ("langgraph", "deepagents"):
        for shape, updates in VALID_UPDATES.items():
            thread_id = f"clean-{reducer}-{shape}"
            chat = delta_chat(store.saver, reducer)
            for update in updates:
                await store.update_state(chat, config(thread_id), {"messages": update}, "chat")
            names.append(thread_id)
    chat = delta_chat(store.saver)
    reset = [RemoveMessage(id=REMOVE_ALL_MESSAGES), human("c"), ai("c1", "c9"), tool("c9")]
    for update in ([human("a"), ai("a1", "c0")], [human("b")], reset):  # broken, then reset
        await store.update_state(chat, config("clean-after-reset"), {"messages": update}, "chat")
    return [*names, "clean-after-reset"]


@pytest.mark.parametrize("serde", ["default", "encrypted"])
async def test_postgres_first_look_walks_delta_heads_in_batches(pg_uri: str, serde: str) -> None:
    """Only the heads whose rebuilt history may be broken are loaded one by one."""
    with postgres(pg_uri, encrypted() if serde == "encrypted" else None) as store:
        threads = await seed_delta(store)
        clean = await seed_clean_delta(store)
        pg = store_for(store.saver)
        assert isinstance(pg, PostgresStore)
        heads = [h for page in pg.pages(Selection(page_size=4)) for h in page]
        looked_at = {h.thread_id for h in heads if h.maybe_broken}
        report = repair_threads(store.saver, min_idle=timedelta(0), dry_run=True)
    assert {h.thread_id for h in heads} == {
        *threads.broken,
        *threads.clean,
        *threads.in_flight,
        *clean,
    }
    assert looked_at == {*threads.broken, *threads.in_flight}
    assert report.threads_needing_repair == len(threads.broken)


COPIES = 143  # seven templates, 1,008 threads in all


@pytest.fixture(params=["sqlite", "postgres"])
def thousand_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A real SQLite file or PostgreSQL schema for a thousand delta threads."""
    if request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            yield Store(saver, is_async=False)
    else:
        with PostgresSaver.from_conn_string(request.getfixturevalue("pg_uri")) as pg:
            pg.setup()
            yield Store(pg, is_async=False)


async def test_a_thousand_delta_threads_repaired_undone_and_continued(
    thousand_store: Store,
) -> None:
    store = thousand_store
    templates = await seed_delta(store)
    saver = store.saver
    names = [*templates.broken, *templates.clean, *templates.in_flight]
    if isinstance(saver, SqliteSaver):
        clone_sqlite(saver, names, COPIES)
    else:
        assert isinstance(saver, PostgresSaver)
        clone_postgres(saver.conn.info.dsn, names, COPIES)  # type: ignore[union-attr]
    broken = [clone_name(t, n) for t in templates.broken for n in range(1, COPIES + 1)]
    broken += templates.broken
    before = {t: await raw_messages(store, t) for t in broken}
    assert all(violations(history) for history in before.values())

    report = await run_repair(store)
    assert report.threads_scanned == 7 * (COPIES + 1)
    assert report.threads_needing_repair == report.threads_repaired == len(broken)
    assert report.skipped == {"in_flight": COPIES + 1}
    for thread_id in broken:
        assert_valid(await raw_messages(store, thread_id))

    undone = await run_undo(store, report.run_id)
    assert (undone.threads_restored, undone.threads_skipped) == (len(broken), 0)
    for thread_id in broken:
        restored = await raw_messages(store, thread_id)
        assert [m.model_dump() for m in restored] == [m.model_dump() for m in before[thread_id]]

    again = await run_repair(store)
    assert again.threads_repaired == len(broken)
    replies = model(*["Go on."] * len(broken))
    agent = delta_agent(replies, ToolBox(), saver)
    for thread_id in broken:  # the provider sees each history and would reject a broken one
        result = await store.invoke(agent, {"messages": [HumanMessage("And?")]}, config(thread_id))
        assert result["messages"][-1].content == "Go on."
    deep = deep_agent(model(*["Went on."] * 20), ToolBox(), saver)
    for thread_id in broken[::40]:
        result = await store.invoke(deep, {"messages": [HumanMessage("And?")]}, config(thread_id))
        assert_valid(result["messages"])
    assert (await run_repair(store, dry_run=True)).threads_needing_repair == 0
