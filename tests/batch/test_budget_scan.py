"""A scan with a token budget gives exactly the report of a scan that loads every head
in full, on all six real savers: threads within the budget, over it, one token either
side of its edge, broken ones, and with a counter of the application's own.

The full-load path is the same budget counted by `count_tokens_approximately` handed
in as the counter: the same count the engine makes by default, which the first look
cannot bound (`first_look_budget`), so every head is loaded. On PostgreSQL the first
look must also have cleared the heads within the budget, or the test proves nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair import RepairPolicy
from langgraph_checkpoint_repair.batch import RunReport
from langgraph_checkpoint_repair.batch.options import first_look_budget
from langgraph_checkpoint_repair.stores import Selection, store_for
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from tests.support.agents import chat_graph
from tests.support.batch_runs import run_repair
from tests.support.histories import ai, human, tool
from tests.support.needs import DELTA_REASON
from tests.support.seeding import config, seed
from tests.support.stores import Store

BUDGET = 1000
POLICY = RepairPolicy(max_input_tokens=BUDGET, context_reserve=0)
FULL_LOAD = RepairPolicy(
    max_input_tokens=BUDGET, context_reserve=0, token_counter=count_tokens_approximately
)


def asking(chars: int) -> list[BaseMessage]:
    """A question of `chars` characters and its answer: no calls, so the first look's
    bound is LangChain's count exactly."""
    return [HumanMessage("q" * chars, id="q"), AIMessage("Done.", id="a")]


EDGE = 4 * (BUDGET - 3 - 7) - len("user")
"""The question's length at which the history counts exactly `BUDGET` tokens: its own
3, the answer's 7 ("Done.assistant" and 3), the rest a token for 4 characters."""
THREADS: dict[str, list[BaseMessage]] = {
    "fits": [SystemMessage("You help.", id="s"), *asking(200)],
    "calls-fit": [human("Weather?"), ai("a1", "c1"), tool("c1"), ai("a2", text="Sunny.")],
    "at-edge": asking(EDGE),
    "past-edge": asking(EDGE + 1),
    "over": asking(20_000),
    "broken-fits": [human("q"), ai("a1", "c1"), human("again")],
    "broken-over": [human("q" * 20_000), ai("a1", "c1")],
    "images": [
        HumanMessage([{"type": "text", "text": "look"}, {"type": "image", "url": "u"}], id="i"),
        AIMessage("A cat.", id="c"),
    ],
}


def test_the_edge_threads_count_as_named() -> None:
    assert count_tokens_approximately(THREADS["at-edge"]) == BUDGET
    assert count_tokens_approximately(THREADS["past-edge"]) == BUDGET + 1


async def seed_budget_threads(store: Store) -> None:
    await seed(store)
    chat = chat_graph(store.saver)
    for thread_id, history in THREADS.items():
        await store.update_state(chat, config(thread_id), {"messages": history}, "chat")


def outcomes(report: RunReport) -> tuple[Any, ...]:
    threads = sorted(
        (t.thread_id, t.checkpoint_ns, t.outcome, tuple(t.actions.get("messages", ())), t.tokens)
        for t in report.threads
    )
    summary = report.to_json() | {"run_id": None}
    return summary, threads


async def test_a_budget_scan_reports_as_the_full_load(store: Store) -> None:
    await seed_budget_threads(store)
    looked = await run_repair(store, dry_run=True, policy=POLICY)
    loaded = await run_repair(store, dry_run=True, policy=FULL_LOAD)
    assert outcomes(looked) == outcomes(loaded)
    needing = {t.thread_id for t in looked.threads}
    assert {"past-edge", "over", "broken-fits", "broken-over"} <= needing
    assert not {"fits", "calls-fit", "at-edge", "images"} & needing


async def test_a_counter_of_its_own_is_counted_on_the_full_load(store: Store) -> None:
    """Twice LangChain's count: the thread at the edge, within the default count, is
    over this one, and only a full load can tell."""
    doubled = RepairPolicy(
        max_input_tokens=BUDGET,
        context_reserve=0,
        token_counter=lambda messages: 2 * count_tokens_approximately(messages),
    )
    assert first_look_budget(doubled) is None
    await seed_budget_threads(store)
    report = await run_repair(store, dry_run=True, policy=doubled)
    needing = {t.thread_id for t in report.threads}
    assert {"at-edge", "past-edge"} <= needing and "fits" not in needing


def test_only_a_budget_counted_by_langchain_is_left_to_the_first_look() -> None:
    assert first_look_budget(POLICY) == BUDGET
    assert first_look_budget(RepairPolicy(max_input_tokens=BUDGET)) == BUDGET - BUDGET // 10
    assert first_look_budget(FULL_LOAD) is None
    assert first_look_budget(RepairPolicy()) is None
    assert first_look_budget(RepairPolicy(max_input_tokens=BUDGET, provider="anthropic")) is None
    assert first_look_budget(RepairPolicy(max_input_tokens=BUDGET, max_result_chars=500)) is None


async def test_postgres_first_look_clears_exactly_the_heads_within_the_budget(
    pg_uri: str,
) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        seeded = await seed(store)
        chat = chat_graph(saver)
        for thread_id, history in THREADS.items():
            await store.update_state(chat, config(thread_id), {"messages": history}, "chat")
        pg = store_for(saver)
        assert isinstance(pg, PostgresStore)
        selection = Selection(page_size=4, token_budget=BUDGET)
        heads = {h.thread_id: h.maybe_broken for page in pg.pages(selection) for h in page}
    looked_at = {thread_id for thread_id, broken in heads.items() if broken}
    over = {"past-edge", "over", "broken-fits", "broken-over", "images"}  # blocks: loaded
    assert looked_at == over | set(seeded.broken) | set(seeded.of("in_flight"))


async def test_postgres_delta_threads_with_a_budget_report_as_the_full_load(
    pg_uri: str,
) -> None:
    pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
    from tests.support.delta_agents import delta_chat

    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        chat = delta_chat(saver)
        for thread_id, history in THREADS.items():
            for message in history:
                chat.update_state(config(thread_id), {"messages": [message]}, as_node="chat")
        store = Store(saver, is_async=False)
        looked = await run_repair(store, dry_run=True, policy=POLICY)
        loaded = await run_repair(store, dry_run=True, policy=FULL_LOAD)
        pg = store_for(saver)
        assert isinstance(pg, PostgresStore)
        selection = Selection(token_budget=BUDGET)
        cleared = {h.thread_id for page in pg.pages(selection) for h in page if not h.maybe_broken}
    assert outcomes(looked) == outcomes(loaded)
    assert cleared == {"fits", "calls-fit", "at-edge"}  # a list content is loaded
