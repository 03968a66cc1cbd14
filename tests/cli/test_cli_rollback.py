"""`langgraph-repair rollback`, run as a child process on SQLite and PostgreSQL: a dry
run that writes nothing, a rollback that leaves the thread reading as before the run
(archived: `undo --run` puts every row back), the other threads untouched, and the
mistakes of a tired operator (a run id no thread holds, no run named; a role that may not
delete is in `tests/security`):
one line, exit 2, nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command

from tests.retention.test_rollback import asking, run, said
from tests.support.cli_runs import last_json, run_cli
from tests.support.pruning import plain_chat, stored_rows, thread
from tests.support.roles import one_line_error
from tests.support.stores import cli_store


def seeded(saver: Any) -> tuple[Any, Any]:
    """A thread that asked, whose answer (run "r2") is to be taken back; another thread."""
    waiting = asking(saver)
    waiting.invoke(said("go"), run("asking", "r1"))
    asked = waiting.get_state(thread("asking"))
    waiting.invoke(Command(resume="yes"), run("asking", "r2"))
    plain_chat(saver).invoke(said("hello"), run("other", "r3"))
    return waiting, asked


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_rollback_its_dry_run_and_its_undo(kind: str, request: pytest.FixtureRequest) -> None:
    with cli_store(kind, request) as (target, store):
        waiting, asked = seeded(store.saver)
        after_runs = stored_rows(store.saver)

        dry = run_cli("rollback", target, "--run", "r2", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "yes: nothing deleted" in dry.stdout and "checkpoints deleted      1" in dry.stdout
        assert stored_rows(store.saver) == after_runs

        rolled = run_cli("rollback", target, "--run", "r2", "--json")
        assert rolled.returncode == 0, rolled.stderr
        report = last_json(rolled.stdout)
        assert (report["rollback_of"], report["threads_pruned"], report["archived"]) == (
            ["r2"], 1, True
        )  # fmt: skip
        state = waiting.get_state(thread("asking"))
        assert (state.values, state.next, state.interrupts) == (
            asked.values, asked.next, asked.interrupts
        )  # fmt: skip
        others = {t: [r for r in rows if r[0] == "other"] for t, rows in after_runs.items()}
        now = stored_rows(store.saver)
        assert {t: [r for r in rows if r[0] == "other"] for t, rows in now.items()} == others

        undone = run_cli("undo", target, "--run", report["run_id"], "--json")
        assert undone.returncode == 0, undone.stderr
        assert last_json(undone.stdout)["threads_restored"] == 1
        assert stored_rows(store.saver) == after_runs
        assert waiting.get_state(thread("asking")).values["messages"][-1].content == "approved: yes"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_run_no_thread_holds_is_one_line_and_nothing_is_written(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        seeded(store.saver)
        before = stored_rows(store.saver)

        refused = run_cli("rollback", target, "--run", "1f0c2a9e-typo")
        missing = run_cli("rollback", target)

        assert "no checkpoint of run '1f0c2a9e-typo' in this store" in one_line_error(refused)
        assert missing.returncode == 2 and "--run" in missing.stderr
        assert stored_rows(store.saver) == before
