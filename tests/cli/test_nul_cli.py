"""The `nul_text` repair as the command does it (`docs/how-to/unreadable-threads.md`): a real graph
bricks a PostgreSQL thread with U+0000 in a pending write; `repair` rewrites that write in
place, the application's resume then applies it without running its task again, and
`undo --run` brings the brick back byte for byte. The real command, in a child process."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.cli_runs import last_json, run_cli
from tests.support.integrity_threads import brick_with_nul, nul_graph
from tests.support.nul_rows import every_row, pending_writes, postgres_saver
from tests.support.seeding import config

IDLE = ("--min-idle", "0")


@pytest.fixture
def bricked(pg_uri: str) -> str:
    with postgres_saver(pg_uri) as saver:
        brick_with_nul(saver, "nul")
        nul_graph(saver, text="fine").invoke({"text": "new"}, config("healthy"))
    return pg_uri


def command_json(*argv: str) -> dict[str, Any]:
    done = run_cli(*argv, "--json")
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def resume(uri: str) -> tuple[list[str], object]:
    calls: list[str] = []
    with postgres_saver(uri) as saver:
        graph = nul_graph(saver, calls)
        graph.invoke(None, config("nul"))
        return calls, graph.get_state(config("nul")).values.get("text")


@pytest.mark.parametrize(
    ("policy", "text"),
    [((), "page one\ufffdpage two"), (("--policy", "nul_text=strip"), "page onepage two")],
)
def test_repair_resume_and_undo_byte_for_byte(
    bricked: str, policy: tuple[str, ...], text: str
) -> None:
    before = pending_writes(bricked, "nul")
    scanned = command_json("scan", bricked, *IDLE, *policy)
    assert (scanned["threads_repaired"], scanned["writes_rewritten"]) == (1, 1)
    (thread,) = scanned["threads"]
    assert thread["outcome"] == "would_repair" and thread["findings"][0]["code"] == "nul_text"

    report = command_json("repair", bricked, *IDLE, *policy)
    kind = "nul_stripped" if policy else "nul_replaced"
    assert report["actions"] == {kind: 1}
    assert (report["threads_repaired"], report["writes_rewritten"]) == (1, 1)
    assert report["checkpoints_written"] == 0

    again = command_json("repair", bricked, *IDLE)
    assert (again["threads_repaired"], again["writes_rewritten"]) == (0, 0)
    assert "findings" not in again

    undone = command_json("undo", bricked, "--run", str(report["run_id"]))
    assert (undone["threads_restored"], undone["writes_restored"]) == (1, 1)
    assert pending_writes(bricked, "nul") == before

    command_json("repair", bricked, *IDLE, *policy)
    assert resume(bricked) == ([], text)  # the write applied; the task did not run again


def test_the_human_summary_counts_the_rewritten_writes(bricked: str) -> None:
    done = run_cli("repair", bricked, *IDLE)
    assert done.returncode == 0, done.stderr
    assert "writes rewritten" in done.stdout and "nul_replaced" in done.stdout
    run_id = next(word for word in done.stdout.split() if word.startswith("run-"))
    undone = run_cli("undo", bricked, "--run", run_id)
    assert undone.returncode == 0, undone.stderr
    assert "writes restored" in undone.stdout


def test_a_dry_run_writes_nothing(bricked: str) -> None:
    before = every_row(bricked)
    report = command_json("repair", bricked, *IDLE, "--dry-run")
    assert (report["threads_repaired"], report["writes_rewritten"]) == (1, 1)
    assert every_row(bricked) == before


def test_a_bad_nul_text_policy_is_a_usage_error(bricked: str) -> None:
    done = run_cli("repair", bricked, *IDLE, "--policy", "nul_text=escape")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "nul_text" in line and "escape" in line
    assert "langgraph_repair_runs" not in every_row(bricked)
