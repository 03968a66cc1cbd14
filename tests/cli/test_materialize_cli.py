"""`langgraph-repair materialize` before a downgrade, on SQLite and PostgreSQL: LangGraph
1.1.10 (from before delta channels, in an environment of its own) reads a delta head as
no messages and a snapshot head as an object; after the run it reads every message and
goes on, and the delta graph reads the thread it left. A dry run changes no row, a
second run writes nothing, and undo puts the delta form back."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.batch.test_delta_diverged import TURNS, ids, read, write_turns
from tests.support.batch_runs import all_checkpoints
from tests.support.cli_runs import last_json, run_cli
from tests.support.histories import human
from tests.support.older_release import BEFORE_DELTA, older_python
from tests.support.stores import Store, cli_store

READER = Path(__file__).resolve().parents[1] / "support" / "plain_reader.py"
THREADS = {"delta": [*TURNS, [human("c")]], "snap": TURNS}
"""A head storing nothing for `messages`, and one storing a `_DeltaSnapshot`."""


def plain_read(target: str, thread_id: str, *flags: str) -> Any:
    """What LangGraph 1.1.10's graph, keeping `messages` as a plain channel, reads."""
    where = target.removeprefix("sqlite:///")
    done = subprocess.run(
        [older_python(BEFORE_DELTA), str(READER), where, thread_id, *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])["messages"]


def materialize(target: str, *argv: str) -> dict[str, Any]:
    done = run_cli("materialize", target, "--min-idle", "0", "--json", *argv)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


async def seeded(store: Store) -> dict[str, list[str | None]]:
    for thread_id, turns in THREADS.items():
        await write_turns(store, thread_id, turns)
    return {thread_id: ids(await read(store, thread_id)) for thread_id in THREADS}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_older_release_reads_every_message_after_it(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        read_before = await seeded(store)
        assert plain_read(target, "delta") == []  # the brick of a downgrade
        assert plain_read(target, "snap") == "_DeltaSnapshot"

        listed = await all_checkpoints(store)
        dry = materialize(target, "--dry-run", "--thread", "delta")
        assert (dry["dry_run"], dry["threads_needing_repair"], dry["threads_repaired"]) == (
            True,
            1,
            1,
        )
        assert await all_checkpoints(store) == listed

        done = materialize(target)
        assert (done["threads_repaired"], done["actions"]) == (2, {"materialized": 2})
        for thread_id, expected in read_before.items():
            assert plain_read(target, thread_id) == expected
            assert ids(await read(store, thread_id)) == expected
        assert materialize(target)["checkpoints_written"] == 0

        went_on = plain_read(target, "delta", "--turn")  # the downgraded graph runs a turn
        assert went_on[: len(read_before["delta"]) + 1] == [*read_before["delta"], "h-older"]
        assert ids(await read(store, "delta")) == went_on  # and an upgrade reads it back


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_undo_puts_the_delta_form_back(kind: str, request: pytest.FixtureRequest) -> None:
    with cli_store(kind, request) as (target, store):
        read_before = await seeded(store)
        done = materialize(target)
        undone = run_cli("undo", target, "--run", done["run_id"], "--json")
        assert undone.returncode == 0, undone.stderr
        assert last_json(undone.stdout)["threads_restored"] == 2
        for thread_id, expected in read_before.items():
            assert plain_read(target, thread_id) == "_DeltaSnapshot"
            assert ids(await read(store, thread_id)) == expected


def test_a_mistake_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "threads.sqlite"
    done = run_cli("materialize", f"sqlite:///{missing}", "--min-idle", "0")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    wrong = run_cli("materialize", "sqlite:///x.sqlite", "--graph", "no_such_module:graph")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert not missing.parent.exists()
