"""A run's summary agrees with itself whatever it found: a head counted repaired, or in
`actions`, is counted as needing repair, for a stale answer and a U+0000 rewrite as for
a broken history. (Every summary the suite makes is held to the same property by
`tests/support/report_checks.py`; these are the findings that once broke it.)"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.cli import main
from tests.support.asking_graphs import answer_first, build, thread
from tests.support.integrity_threads import brick_with_nul
from tests.support.nul_rows import postgres_saver
from tests.support.report_checks import apart_from_ids, inconsistencies
from tests.support.stores import Store


def dry_run(target: str, *extra: str) -> dict[str, Any]:
    out = io.StringIO()
    code = main(["repair", target, "--dry-run", "--min-idle", "0", "--json", *extra], out=out)
    assert code == 0
    summary: dict[str, Any] = json.loads(out.getvalue().strip().splitlines()[-1])
    return summary


def test_the_check_catches_the_summary_that_once_disagreed() -> None:
    summary = {
        "threads_scanned": 1,
        "threads_needing_repair": 0,
        "threads_repaired": 1,
        "writes_rewritten": 1,
        "actions": {"resume_dropped": 1},
    }

    assert inconsistencies(summary) == ["threads_repaired 1 > threads_needing_repair 0"]
    assert inconsistencies({**summary, "threads_repaired": 0}) == [
        "1 actions, but no thread repaired",
        "writes rewritten, but no thread repaired",
    ]


async def test_a_stale_answer_is_counted_as_needing_repair(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        store = Store(saver, is_async=False)
        await answer_first(store, build("one_task", saver), "one_task", thread("stale"))

    summary = dry_run(f"sqlite:///{path}")
    kept = dry_run(f"sqlite:///{path}", "--policy", "stale_resume=keep")

    assert summary["threads_needing_repair"] == summary["threads_repaired"] == 1
    assert summary["actions"] == {"resume_dropped": 1}
    assert kept["threads_repaired"] == 0 and kept["actions"] == {}
    assert apart_from_ids(kept["findings"]) == {"stale_resume": 1}


@pytest.mark.usefixtures("postgres_server")
def test_a_nul_rewrite_is_counted_as_needing_repair(pg_uri: str) -> None:
    with postgres_saver(pg_uri) as saver:
        brick_with_nul(saver, "nul")

    summary = dry_run(pg_uri)

    assert summary["threads_needing_repair"] == summary["threads_repaired"] == 1
    assert summary["writes_rewritten"] == 1
