"""`scan --prove-history` and `repair --prove-history` on SQLite and PostgreSQL, on a
fork LangGraph 1.2.11 stored itself (in an environment of its own): it regenerated an
answer and went on, and the thread reads the replaced answer beside the new one, for
that release and the newest alike. The scan finds it, a dry run changes no row, the
repair leaves the thread reading what was answered, the newest release goes on, and a
second scan finds nothing; undo puts the read back."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.cli_runs import last_json, postgres_rows, run_cli, sqlite_rows
from tests.support.older_release import FORK_UNSEALED, older_python
from tests.support.stores import cli_store

APP = Path(__file__).resolve().parents[1] / "support" / "regenerate_app.py"
BRICKED = [*("Hi", "answer 1", "Hello", "answer 2", "Hey", "answer 3", "Again?"), "answer 4"]
"""What the thread reads up to its regenerate, "answer 5": "answer 4" is the one replaced.
(On PostgreSQL a fork reads its parent's snapshot where the parent stored one: the app's
regenerate forks from a checkpoint that stores none.)"""
LATER = ["answer 5", "More", "answer 6", "And more", "answer 7", "Last", "answer 8"]


def app(python: str, target: str, *argv: str) -> list[Any]:
    """The application's run under `python`, and the texts it then read."""
    where = target.removeprefix("sqlite:///")
    done = subprocess.run(
        [python, str(APP), where, "regenerated", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: list[Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def rows(target: str) -> Any:
    if target.startswith("sqlite:///"):
        return sqlite_rows(Path(target.removeprefix("sqlite:///")))
    return postgres_rows(target)


def prove(command: str, target: str, *argv: str) -> dict[str, Any]:
    done = run_cli(command, target, "--min-idle", "0", "--prove-history", "--json", *argv)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_fork_the_release_stored_unsealed_is_found_and_repaired(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, _):
        bricked = app(older_python(FORK_UNSEALED), target, "build")
        assert bricked == [*BRICKED, *LATER]  # the brick: both answers, for good
        assert app(sys.executable, target, "read") == bricked  # the newest reads it so

        found = prove("scan", target)
        assert found["threads_needing_repair"] == 1
        (thread,) = found["threads"]
        assert {a.split(":")[0] for a in thread["actions"]["messages"]} == {"delta_value_diverged"}
        before = rows(target)
        assert prove("repair", target, "--dry-run")["threads_needing_repair"] == 1
        assert rows(target) == before

        done = prove("repair", target)
        assert done["threads_repaired"] == 1
        proven = [t for t in bricked if t != "answer 4"]
        assert app(sys.executable, target, "read") == proven
        assert prove("scan", target)["threads_needing_repair"] == 0

        undone = run_cli("undo", target, "--run", done["run_id"], "--json")
        assert undone.returncode == 0, undone.stderr
        assert last_json(undone.stdout)["threads_restored"] == 1
        assert app(sys.executable, target, "read") == bricked
        assert prove("repair", target)["threads_repaired"] == 1
        went_on = app(sys.executable, target, "turn", "Next")
        assert went_on == [*proven, "Next", "answer 1"]
