"""`scan --waiting` on real SQLite and PostgreSQL stores: the table, `--list` and `--json`
list only the threads waiting on a human (how long, which node, the question);
`--min-idle` keeps the old ones; `scan --json` carries them beside the broken heads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cli_runs import last_json, run_cli
from tests.support.stores import Store, cli_store
from tests.support.waiting_threads import DICT_QUESTION, NODES, WAITING, seed_waiting


@pytest.fixture(params=["sqlite", "postgres"])
def waiting_store(request: pytest.FixtureRequest) -> Iterator[tuple[str, Store]]:
    with cli_store(request.param, request) as found:
        yield found


async def test_the_table_lists_each_waiting_thread_and_only_those(
    waiting_store: tuple[str, Store],
) -> None:
    target, store = waiting_store
    await seed_waiting(store)

    shown = run_cli("scan", target, "--waiting", "--min-idle", "0")

    assert shown.returncode == 0, shown.stderr
    rows = {line.split()[0]: line for line in shown.stdout.splitlines() if line.strip()}
    assert set(rows) >= WAITING and "answered" not in rows
    assert "confirm the amount?" in rows["stale-one_task"] and " ask " in rows["stale-one_task"]
    assert "check" in rows["fan-out"] and "(+2 more)" in rows["fan-out"]
    assert '"action": "refund"' in rows["a-dict"]
    assert "threads waiting on a human" in shown.stdout


async def test_list_and_json_give_ids_ages_nodes_and_questions(
    waiting_store: tuple[str, Store],
) -> None:
    target, store = waiting_store
    await seed_waiting(store)

    listed = run_cli("scan", target, "--waiting", "--min-idle", "0", "--list")
    as_json = run_cli("scan", target, "--waiting", "--min-idle", "0", "--json")

    assert listed.returncode == 0 and as_json.returncode == 0, listed.stderr + as_json.stderr
    lines = [line.split("\t") for line in listed.stdout.splitlines()]
    assert {cells[0] for cells in lines} == WAITING
    report = last_json(as_json.stdout)
    assert "threads" not in report and report["waiting_heads"] == len(WAITING)
    entries = {entry["thread_id"]: entry for entry in report["waiting"]}
    assert {t: {i["node"] for i in e["interrupts"]} for t, e in entries.items()} == NODES
    assert entries["a-dict"]["interrupts"][0]["value"] == DICT_QUESTION
    for cells in lines:  # the same heads, the same interrupt ids, a whole number of seconds
        entry = entries[cells[0]]
        assert cells[2] == entry["checkpoint_id"] and int(cells[3]) >= 0
        assert cells[4].split(",") == [i["id"] for i in entry["interrupts"]]


async def test_min_idle_keeps_only_the_threads_idle_that_long(
    waiting_store: tuple[str, Store],
) -> None:
    target, store = waiting_store
    await seed_waiting(store)

    fresh = last_json(run_cli("scan", target, "--waiting", "--min-idle", "7d", "--json").stdout)

    assert fresh["waiting"] == [] and fresh["waiting_heads"] == 0


async def test_scan_json_lists_the_waiting_beside_the_broken(
    waiting_store: tuple[str, Store],
) -> None:
    target, store = waiting_store
    await seed_waiting(store)

    report = last_json(run_cli("scan", target, "--min-idle", "0", "--json").stdout)

    stale = {thread["thread_id"] for thread in report["threads"]}
    assert stale == {"stale-one_task", "stale-subgraph", "stale-goto"}
    assert {entry["thread_id"] for entry in report["waiting"]} == WAITING
