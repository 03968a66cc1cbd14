"""`on_thread`: a run hands each head it would list to the caller as its page ends, in
the order the store gives the heads, and keeps none; what it hands over and counts is
what a run keeping every head reports. Every saver, sync and async."""

from __future__ import annotations

import json
from typing import Any

from langgraph_checkpoint_repair.batch import RunReport, ThreadReport
from langgraph_checkpoint_repair.batch.report import thread_order
from langgraph_checkpoint_repair.stores import astore_for, store_for, stored_saver
from langgraph_checkpoint_repair.stores.base import Selection
from tests.support.batch_runs import run_repair
from tests.support.seeding import seed
from tests.support.stores import Store

PAGE = 2  # heads per page: the seeded store spans several


async def store_order(store: Store) -> list[tuple[str, str]]:
    """Every head, in the order the run's store gives them."""
    selection = Selection(page_size=PAGE)
    saver = stored_saver(store.saver)
    if store.is_async:
        pages = [page async for page in astore_for(saver).pages(selection)]
    else:
        pages = list(store_for(saver).pages(selection))
    return [(head.thread_id, head.checkpoint_ns) for page in pages for head in page]


def as_text(thread: ThreadReport) -> str:
    return json.dumps(thread.to_json(), sort_keys=True)


def summary(report: RunReport) -> dict[str, Any]:
    return {k: v for k, v in report.to_json().items() if k != "run_id"}


async def test_each_head_is_handed_over_as_its_page_ends_and_none_is_kept(store: Store) -> None:
    seeded = await seed(store, bricked=4)
    kept = await run_repair(store, dry_run=True, page_size=PAGE)

    handed: list[tuple[int, ThreadReport]] = []
    pages: list[RunReport] = []
    streamed = await run_repair(
        store,
        dry_run=True,
        page_size=PAGE,
        on_progress=pages.append,
        on_thread=lambda thread: handed.append((len(pages), thread)),
    )

    assert streamed.threads == [] and kept.threads
    assert summary(streamed) == summary(kept)
    threads = [thread for _, thread in handed]
    assert sorted(map(as_text, threads)) == sorted(map(as_text, kept.threads))
    assert {t.thread_id for t in threads} >= set(seeded.broken)
    # handed over page by page while the run went on, in the store's order
    assert len({page for page, _ in handed}) > 1 and handed[0][0] < len(pages)
    listed = [thread_order(thread) for thread in threads]
    assert listed == [key for key in await store_order(store) if key in set(listed)]
