"""PostgreSQL's first look proves a stale answer from the head's own rows (the one task
that asks twice, `goto` with `resume`), so a run reports and deletes it without loading
the head; a head whose subgraph may have taken the answer is loaded as before. What the
look decides is what the full load decides: the same report, run for run."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.engine import RepairPolicy
from langgraph_checkpoint_repair.stores import Selection, store_for
from tests.support.asking_graphs import SHAPES, seed_asking
from tests.support.report_checks import ID_CODES
from tests.support.stores import Store, cli_store


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> Iterator[Store]:
    with cli_store("postgres", request) as (_, store):
        yield store


def root_heads(store: Store) -> dict[str, Any]:
    pages = store_for(store.saver).pages(Selection(channels=("messages",)))
    return {head.thread_id: head for page in pages for head in page if not head.checkpoint_ns}


async def test_the_look_proves_the_answers_a_head_shows_and_leaves_the_subgraphs_to_a_load(
    postgres: Store,
) -> None:
    await seed_asking(postgres)

    heads = root_heads(postgres)

    proven = {thread_id for thread_id, head in heads.items() if head.stale_since}
    assert proven == {"stale-one_task", "stale-goto"}
    assert not any(heads[thread_id].maybe_broken for thread_id in proven)
    assert heads["stale-subgraph"].maybe_broken  # its subgraph's writes decide: loaded
    assert not heads["first-question"].maybe_broken and not heads["by-id"].maybe_broken
    stored = postgres.saver.get_tuple(heads["stale-one_task"].config)
    assert stored is not None and heads["stale-one_task"].stale_since == stored.checkpoint["ts"]


def threads_of(store: Store, policy: RepairPolicy, **options: Any) -> list[dict[str, Any]]:
    """The threads the run lists, less those listed for their interrupt ids alone (a
    LangGraph before 1.2.20 gives a later question its task's first id)."""
    report = repair_threads(store.saver, dry_run=True, policy=policy, **options)
    listed = sorted((found.to_json() for found in report.threads), key=lambda f: f["thread_id"])
    return [found for found in listed if not _ids_alone(found)]


def _ids_alone(found: dict[str, Any]) -> bool:
    codes = {finding["code"] for finding in found.get("findings", [])}
    return bool(codes) and codes <= ID_CODES and not found.get("actions")


@pytest.mark.parametrize("min_idle", [timedelta(0), timedelta(days=1)])
@pytest.mark.parametrize("stale_resume", ["drop", "keep"])
async def test_a_run_judged_by_the_look_reports_what_a_run_that_loads_each_head_reports(
    postgres: Store, min_idle: timedelta, stale_resume: Any
) -> None:
    await seed_asking(postgres)
    looked = RepairPolicy(stale_resume=stale_resume)
    loaded = RepairPolicy(stale_resume=stale_resume, provider="openai")  # reads every head
    assert not looked.reads_content and loaded.reads_content

    by_look = threads_of(postgres, looked, min_idle=min_idle, limit=None)
    by_load = threads_of(postgres, loaded, min_idle=min_idle, limit=None)

    assert by_look == by_load
    assert {found["thread_id"] for found in by_look} == {f"stale-{shape}" for shape in SHAPES}
    expected = "reported" if stale_resume == "keep" else ("recent" if min_idle else "would_repair")
    assert {found["outcome"] for found in by_look} == {expected}


async def test_a_limit_counts_an_answer_judged_by_the_look_as_one_judged_by_a_load(
    postgres: Store,
) -> None:
    await seed_asking(postgres)

    by_look = threads_of(postgres, RepairPolicy(), min_idle=timedelta(0), limit=1)
    by_load = threads_of(postgres, RepairPolicy(provider="openai"), min_idle=timedelta(0), limit=1)

    outcomes = sorted(found["outcome"] for found in by_look)
    assert outcomes == sorted(found["outcome"] for found in by_load)  # which one: run order
    assert outcomes == ["limit", "limit", "would_repair"]
