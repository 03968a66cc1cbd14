"""The Agent Server's rollback through the one line, as the server calls it: a run
cancelled in its last step, then `adelete_for_runs` with its id through langgraph-api's
own adapter (`tests/support/one_line_rollback.py`, in a process of its own), on SQLite
and on PostgreSQL. A plain thread, a delta thread and a thread whose answer the run
took each read as before the run (values, next, interrupts) and go on; another thread
is untouched; an empty list and an unknown run change nothing."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph_api", reason="the Agent Server needs the dev extra")
pytest.importorskip("langgraph.channels.delta", reason="delta channels need langgraph 1.2")

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]


def rolled_back(target: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGGRAPH_REPAIR_")}
    env.pop("DATABASE_URI", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.one_line_rollback", target],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_cancelled_run_is_rolled_back_through_the_one_line(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = (
        f"sqlite:///{tmp_path / 'threads.sqlite'}"
        if kind == "sqlite"
        else request.getfixturevalue("pg_uri")
    )

    seen = rolled_back(target)

    assert seen["has_adelete_for_runs"], seen["inner"]
    before = seen["before"]
    for thread_id in ("plain", "delta", "asking"):
        rolled = seen["seen"][thread_id]
        assert rolled["during"] > before[thread_id][0], thread_id  # the run had written
        assert rolled["after"] == before[thread_id], thread_id  # read as before it
    assert before["asking"][1][1:] == [["ask"], [[before["asking"][1][2][0][0], "approve?"]]]
    assert seen["other"] == before["other"]
    went_on = seen["went_on"]
    for thread_id in ("plain", "delta"):
        assert went_on[thread_id][0][3:] == [
            ["human", "go on"], ["ai", "reply 4"], ["ai", "done after 5"]
        ], thread_id  # fmt: skip
    assert went_on["asking"][0][1:] == [["ai", "approved: yes"], ["ai", "done after 2"]]
