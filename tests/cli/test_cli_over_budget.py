"""A thread no trim can make fit, through the command on SQLite and PostgreSQL: a
pasted log larger than the budget is listed `over_budget` by `scan`, `scan --list`,
`--json` and `show` before and after `repair`, which writes nothing, and `show`
never calls it clean."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_runs import last_json, postgres_rows, run_cli, sqlite_rows
from tests.support.context import ANSWER, LOG, paste_the_log
from tests.support.seeding import config
from tests.support.stores import Store, cli_store

SETTINGS = ("--policy", "max_input_tokens=200000", "--policy", "context_reserve=20000")
LOOK = (*SETTINGS, "--min-idle", "0")


@pytest.fixture(params=["sqlite", "postgres"])
def pasted(request: pytest.FixtureRequest) -> Iterator[tuple[str, Store]]:
    with cli_store(request.param, request) as (target, store):
        yield target, store


def rows(target: str) -> Any:
    """The saver's rows (on PostgreSQL, a repair also makes its audit tables)."""
    if target.startswith("sqlite:///"):
        return sqlite_rows(Path(target.removeprefix("sqlite:///")))
    counts = postgres_rows(target)
    return {table: n for table, n in counts.items() if not table.startswith("langgraph_repair")}


def looks(target: str) -> None:
    """Every look says the thread is over the budget; none says it is clean."""
    listed = run_cli("scan", target, "--list", *LOOK)
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.strip().splitlines()
    assert line.split("\t")[0] == "paste" and line.split("\t")[-1] == "over_budget"

    scanned = run_cli("scan", target, *LOOK, COLUMNS="200")
    assert scanned.returncode == 0, scanned.stderr
    assert "threads with over_budget" in scanned.stdout and "over_budget" in scanned.stdout
    summary = last_json(run_cli("scan", target, "--json", *LOOK).stdout)
    assert summary["findings"] == {"over_budget": 1}
    (thread,) = summary["threads"]
    assert thread["outcome"] == "reported" and thread["actions"] == {}
    assert [f["code"] for f in thread["findings"]] == ["over_budget"]
    before, after = thread["tokens"]["messages"]["before"], thread["tokens"]["messages"]["after"]
    assert before == after > 200_000

    shown = run_cli("show", target, "--thread", "paste", *SETTINGS, COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    assert "clean" not in shown.stdout
    assert "over the token budget, and no trim makes it fit" in shown.stdout
    assert f"over_budget in channel 'messages': {before:,} tokens" in shown.stdout
    as_json = last_json(run_cli("show", target, "--thread", "paste", "--json", *SETTINGS).stdout)
    assert as_json["outcome"] == "reported" and as_json["actions"] == []
    assert [f["code"] for f in as_json["findings"]] == ["over_budget"]


async def test_a_pasted_log_is_over_budget_on_every_look_and_repair_writes_nothing(
    pasted: tuple[str, Store],
) -> None:
    target, store = pasted
    await paste_the_log(store, "paste")
    stored = rows(target)
    looks(target)
    for _ in range(2):
        repaired = run_cli("repair", target, "--json", *LOOK)
        assert repaired.returncode == 0, repaired.stderr
        report = last_json(repaired.stdout)
        assert report["threads_repaired"] == 0 and report["checkpoints_written"] == 0
        assert report["findings"] == {"over_budget": 1}
        looks(target)
    assert rows(target) == stored
    tup = store.saver.get_tuple(config("paste"))
    assert tup is not None
    assert [m.content for m in tup.checkpoint["channel_values"]["messages"]] == [LOG, ANSWER]
