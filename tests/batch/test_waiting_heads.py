"""Who is waiting on a human: a run with `waiting` lists every root head with an open
interrupt, with the ids and values LangGraph itself reports and the node that asked, on
all six savers; `min_idle` keeps the heads idle that long; it writes nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from langgraph_checkpoint_repair.batch import RunReport, arepair_threads, repair_threads
from langgraph_checkpoint_repair.waiting import WaitingHead, json_value
from tests.support.stores import Store
from tests.support.waiting_threads import (
    DICT_QUESTION,
    NODES,
    WAITING,
    langgraph_interrupts,
    seed_waiting,
)


async def scanned(store: Store, **settings: Any) -> RunReport:
    settings = {"dry_run": True, "waiting": True, "min_idle": 0, **settings}
    if store.is_async:
        return await arepair_threads(store.saver, **settings)
    return repair_threads(store.saver, **settings)


def by_thread(report: RunReport) -> dict[str, WaitingHead]:
    heads = {head.thread_id: head for head in report.waiting}
    assert len(heads) == len(report.waiting), "one head per thread: the root's"
    return heads


async def test_every_waiting_thread_is_listed_as_langgraph_sees_it(store: Store) -> None:
    await seed_waiting(store)

    report = await scanned(store)

    heads = by_thread(report)
    assert set(heads) == WAITING and report.waiting_heads == len(WAITING)
    for thread_id, expected in (await langgraph_interrupts(store)).items():
        found = sorted(((i.id, i.value) for i in heads[thread_id].interrupts), key=str)
        assert found == expected
    assert {t: {i.node for i in head.interrupts} for t, head in heads.items()} == NODES
    assert heads["stale-goto"].interrupts[0].value == "confirm the amount?"
    assert len(heads["fan-out"].interrupts) == 3


async def test_age_is_the_head_own_time_and_min_idle_keeps_the_old_ones(store: Store) -> None:
    now = datetime.now(timezone.utc)
    await seed_waiting(store)

    week_on = await scanned(store, started=now + timedelta(days=8), min_idle=timedelta(days=7))
    days_on = await scanned(store, started=now + timedelta(days=6), min_idle=timedelta(days=7))

    assert {head.thread_id for head in week_on.waiting} == WAITING
    for head in week_on.waiting:
        idle = head.idle(week_on.now)
        assert idle is not None and timedelta(days=7) < idle <= timedelta(days=8)
    assert days_on.waiting == [] and days_on.waiting_heads == 0
    assert days_on.waiting_by_age == {"1d_to_7d": len(WAITING)}  # counted all the same
    assert week_on.waiting_by_age == {"7d_or_more": len(WAITING)}


async def test_a_look_writes_nothing_and_without_waiting_lists_nobody(store: Store) -> None:
    await seed_waiting(store)
    before = [t.checkpoint["id"] for t in await store.list(store.saver, None)]

    looked = await scanned(store)
    plain = await scanned(store, waiting=False)

    after = [t.checkpoint["id"] for t in await store.list(store.saver, None)]
    assert after == before
    assert looked.checkpoints_written == 0 and looked.waiting
    assert plain.waiting == [] and "waiting_heads" not in plain.to_json()
    assert looked.to_json()["waiting_heads"] == len(WAITING)


async def test_the_json_of_a_waiting_head_carries_the_question_whole(store: Store) -> None:
    await seed_waiting(store)

    report = await scanned(store)

    listed = {entry["thread_id"]: entry for entry in report.to_json()["waiting"]}
    assert listed["a-dict"]["interrupts"][0]["value"] == DICT_QUESTION
    assert listed["a-dict"]["interrupts"][0]["node"] == "review"
    assert isinstance(listed["first-question"]["idle_seconds"], int)
    assert datetime.fromisoformat(listed["first-question"]["waiting_since"]).tzinfo is not None


async def test_handed_over_page_by_page_when_asked() -> None:
    saver = InMemorySaver()
    await seed_waiting(Store(saver, is_async=False))
    handed: list[WaitingHead] = []

    report = repair_threads(
        saver, dry_run=True, waiting=True, min_idle=0, page_size=2, on_waiting=handed.append
    )

    assert {head.thread_id for head in handed} == WAITING
    assert report.waiting == [] and report.waiting_heads == len(WAITING)
    assert "waiting" not in report.to_json() and report.to_json()["waiting_heads"] == len(WAITING)


def test_a_value_json_cannot_carry_is_given_as_its_repr() -> None:
    class Ticket:
        def __repr__(self) -> str:
            return "Ticket(42)"

    assert json_value({"a": [1, "b", None]}) == {"a": [1, "b", None]}
    assert json_value(Ticket()) == "Ticket(42)"
    assert json_value({("tuple", "key"): 1}) == "{('tuple', 'key'): 1}"
