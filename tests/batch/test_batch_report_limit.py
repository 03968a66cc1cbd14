"""`max_reported_threads`: a run on a store of many broken threads keeps only the first
ones by thread id in its report (so its memory stays flat), and counts the rest. The
full report of the same store is the reference."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from langgraph_checkpoint_repair.batch import RunOptions, repair_threads
from langgraph_checkpoint_repair.batch.report import thread_order
from tests.support.many_threads import multiply
from tests.support.postgres_threads import BROKEN, CLEAN, put_chain, saver_on

COPIES = 40


def seed_many_broken(uri: str) -> list[str]:
    """COPIES + 1 broken threads and as many clean ones."""
    with saver_on(uri) as saver:
        put_chain(saver, "bricked", "", BROKEN)
        put_chain(saver, "clean", "", CLEAN)
    return ["bricked", *multiply(uri, ["bricked", "clean"], COPIES)[:COPIES]]


def scan(uri: str, **settings: Any) -> Any:
    with saver_on(uri) as saver:
        return repair_threads(saver, dry_run=True, min_idle=timedelta(0), **settings)


@pytest.mark.parametrize("kept", [0, 1, 7, COPIES + 1, 500])
def test_a_capped_report_keeps_the_first_threads_and_counts_the_rest(
    pg_uri: str, kept: int
) -> None:
    broken = seed_many_broken(pg_uri)
    full = scan(pg_uri, concurrency=1)
    capped = scan(pg_uri, concurrency=4, max_reported_threads=kept)
    assert len(full.threads) == len(broken)
    expected = sorted(full.threads, key=thread_order)[:kept]
    assert [vars(t) for t in capped.threads] == [vars(t) for t in expected]
    assert capped.threads_not_listed == len(broken) - len(expected)
    assert full.threads_not_listed == 0
    # The counters are the same whatever the report keeps.
    summary, full_summary = capped.to_json(), full.to_json()
    del summary["run_id"], full_summary["run_id"]
    assert summary == full_summary
    assert full_summary["threads_needing_repair"] == len(broken)


def test_a_capped_repair_still_repairs_every_thread(pg_uri: str) -> None:
    broken = seed_many_broken(pg_uri)
    with saver_on(pg_uri) as saver:
        report = repair_threads(saver, min_idle=timedelta(0), max_reported_threads=3)
    assert report.threads_repaired == len(broken)
    assert [t.thread_id for t in report.threads] == sorted(broken)[:3]
    assert report.threads_not_listed == len(broken) - 3
    assert scan(pg_uri).threads_needing_repair == 0


@pytest.mark.parametrize(
    ("value", "error"), [(-1, ValueError), ("50", TypeError), (True, TypeError), (2.5, TypeError)]
)
def test_max_reported_threads_must_be_a_whole_number(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_reported_threads"):
        RunOptions(max_reported_threads=value)
