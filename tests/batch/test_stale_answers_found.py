"""A stale answer found by code: `scan` (`--json`, `--list`) and `show` report
`stale_resume` on real SQLite and PostgreSQL stores and through a saver known only by
its API, in the three shapes; a thread waiting on its first question and an answer
given by interrupt id are never flagged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_checkpoint_repair.batch import RunReport, arepair_threads, repair_threads
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.asking_graphs import SHAPES, seed_asking
from tests.support.cli_runs import last_json, run_cli
from tests.support.report_checks import ID_CODES, apart_from_ids
from tests.support.stores import Store, cli_store


@pytest.fixture(params=["sqlite", "postgres"])
def asking_store(request: pytest.FixtureRequest) -> Iterator[tuple[str, Store]]:
    with cli_store(request.param, request) as found:
        yield found


def stale_threads(report: dict[str, Any]) -> set[str]:
    return {
        thread["thread_id"]
        for thread in report["threads"]
        if any(found["code"] == "stale_resume" for found in thread.get("findings") or ())
    }


async def test_scan_reports_each_stale_answer_and_nothing_else(
    asking_store: tuple[str, Store],
) -> None:
    target, store = asking_store
    await seed_asking(store)

    scanned = run_cli("scan", target, "--min-idle", "0", "--json")

    assert scanned.returncode == 0, scanned.stderr
    report = last_json(scanned.stdout)
    assert stale_threads(report) == {f"stale-{shape}" for shape in SHAPES}
    assert apart_from_ids(report["findings"]) == {"stale_resume": 3}


async def test_scan_list_prints_the_code_on_each_stale_thread(
    asking_store: tuple[str, Store],
) -> None:
    target, store = asking_store
    await seed_asking(store)

    listed = run_cli("scan", target, "--min-idle", "0", "--list").stdout.splitlines()

    flagged = {line.split("\t")[0] for line in listed if "stale_resume" in line}
    assert flagged == {f"stale-{shape}" for shape in SHAPES}


@pytest.mark.parametrize("shape", SHAPES)
async def test_show_names_the_stale_answer(asking_store: tuple[str, Store], shape: str) -> None:
    target, store = asking_store
    await seed_asking(store)

    shown = last_json(run_cli("show", target, "--thread", f"stale-{shape}", "--json").stdout)
    waiting = last_json(run_cli("show", target, "--thread", "first-question", "--json").stdout)

    codes = [found["code"] for found in shown["findings"]]
    assert [code for code in codes if code not in ID_CODES] == ["stale_resume"]
    assert shown["findings"][0]["channel"] == "__resume__"
    assert waiting["findings"] == []


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_async_api_finds_them_too(kind: str, request: pytest.FixtureRequest) -> None:
    with cli_store(kind, request) as (target, store):
        await seed_asking(store)
        with open_saver(target, read_only=True) as saver:
            found = repair_threads(saver, dry_run=True, min_idle=0)
        async with aopen_saver(target, read_only=True) as asaver:
            afound = await arepair_threads(asaver, dry_run=True, min_idle=0)

    assert flagged(found) == flagged(afound) == {f"stale-{shape}" for shape in SHAPES}


def flagged(report: RunReport) -> set[str]:
    return {thread.thread_id for thread in report.threads if "stale_resume" in thread.codes}


async def test_a_saver_known_by_its_api_has_them_found_through_its_pending_writes() -> None:
    saver = InMemorySaver()
    await seed_asking(Store(saver, is_async=False))

    found = repair_threads(saver, dry_run=True, min_idle=0)
    afound = await arepair_threads(saver, dry_run=True, min_idle=0)

    assert flagged(found) == flagged(afound) == {f"stale-{shape}" for shape in SHAPES}
