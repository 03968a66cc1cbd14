"""A store with more broken threads than a table shows: `scan` and `repair` print the
first TABLE_ROWS by thread id and say how many more there are and where they are
listed; `scan --list` and `scan --json` still list every one."""

from __future__ import annotations

from langgraph_checkpoint_repair.cli.arguments import TABLE_ROWS
from tests.cli.test_cli import last_json, run
from tests.support.cli_runs import repairs_per_thread_postgres
from tests.support.many_threads import multiply
from tests.support.postgres_threads import BROKEN, put_chain, saver_on

COPIES = TABLE_ROWS + 9


def seed_many_broken(uri: str) -> list[str]:
    with saver_on(uri) as saver:
        put_chain(saver, "bricked", "", BROKEN)
    return sorted(["bricked", *multiply(uri, ["bricked"], COPIES)])


def tabled_threads(output: str, broken: list[str]) -> list[str]:
    """The thread ids of the table's rows, in the order printed."""
    ids = set(broken)
    return [cells[0] for line in output.splitlines() if (cells := line.split()) and cells[0] in ids]


def test_scan_table_shows_the_first_threads_and_says_where_the_rest_are(pg_uri: str) -> None:
    broken = seed_many_broken(pg_uri)
    code, output = run("scan", pg_uri, "--min-idle", "0")
    assert code == 0
    assert tabled_threads(output, broken) == broken[:TABLE_ROWS]
    more = len(broken) - TABLE_ROWS
    assert f"... and {more:,} more threads; `scan --list` lists every one" in output
    assert ["threads", "needing", "repair", str(len(broken))] in [
        line.split() for line in output.splitlines()
    ]

    listed = run("scan", pg_uri, "--min-idle", "0", "--list")[1].splitlines()
    assert sorted(line.split("\t")[0] for line in listed) == broken
    payload = last_json(run("scan", pg_uri, "--min-idle", "0", "--json")[1])
    assert sorted(t["thread_id"] for t in payload["threads"]) == broken


def test_repair_table_points_at_the_audit_and_every_thread_is_repaired(pg_uri: str) -> None:
    broken = seed_many_broken(pg_uri)
    code, output = run("repair", pg_uri, "--min-idle", "0")
    assert code == 0
    assert tabled_threads(output, broken) == broken[:TABLE_ROWS]
    run_id = next(
        cells[1] for line in output.splitlines() if (cells := line.split())[:1] == ["run"]
    )
    more = len(broken) - TABLE_ROWS
    assert f"... and {more:,} more threads; the audit of run {run_id} holds every one" in output
    assert repairs_per_thread_postgres(pg_uri) == dict.fromkeys(broken, 1)


def test_repair_json_prints_counts_and_keeps_no_thread_list(pg_uri: str) -> None:
    broken = seed_many_broken(pg_uri)
    code, output = run("repair", pg_uri, "--min-idle", "0", "--json")
    assert code == 0
    payload = last_json(output)
    assert payload["threads_repaired"] == len(broken) and "threads" not in payload
