"""Threads paused by one LangGraph release and answered by another, on SQLite and
PostgreSQL files the two releases share: the brick first, then `scan` finding it, the
gate `scan --interrupt-ids` closing on it, `repair --interrupt-ids` re-keying the stored
question so the answer reaches the question it was meant for, and `undo` putting the
bytes back. The node asks `q1`, then `q2`; the client retries its answer to q1 by id."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from langgraph_checkpoint_repair.stores.sqlite import SqliteStore
from langgraph_checkpoint_repair.targets import open_saver
from tests.support.cli_runs import last_json, run_cli
from tests.support.older_release import NEWEST, drive, older_python
from tests.support.roles import WRITE_GRANTS, MakeRole, migrated, one_line_error
from tests.support.two_questions import TAGS

ASKED_Q1_ANSWERED = "yes"


@dataclass(frozen=True)
class Shared:
    """A store both releases open: as the application names it and as the command does."""

    app: str
    target: str
    older: str

    def run(self, python: str, thread: str, *argv: str) -> dict[str, Any]:
        return drive(python, self.app, thread, *argv)

    def old(self, thread: str, *argv: str) -> dict[str, Any]:
        return self.run(self.older, thread, *argv)

    def new(self, thread: str, *argv: str) -> dict[str, Any]:
        return self.run(NEWEST, thread, *argv)

    def command(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*argv[:1], self.target, "--min-idle", "0", "--json", *argv[1:])

    def writes(self) -> list[Any]:
        """Every pending write row, whole, to prove what a run changed or left."""
        if self.target.startswith("sqlite:///"):
            import contextlib
            import sqlite3

            with contextlib.closing(sqlite3.connect(self.app)) as conn:
                return conn.execute("SELECT * FROM writes ORDER BY 1, 2, 3, 4, 5").fetchall()
        import psycopg

        with psycopg.connect(self.target) as conn:
            return conn.execute("SELECT * FROM checkpoint_writes ORDER BY 1, 2, 3, 4, 5").fetchall()


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Shared]:
    older = older_python()
    if request.param == "postgres":
        uri = request.getfixturevalue("pg_uri")
        yield Shared(uri, uri, older)
    else:
        path = tmp_path / "threads.sqlite"
        yield Shared(str(path), f"sqlite:///{path}", older)


def paused_at_q2(shared: Shared, python: str, thread: str) -> str:
    """A thread `python`'s release paused at q2 after the client answered q1 by id;
    q1's id."""
    q1 = shared.run(python, thread, "start")["interrupts"][0]["id"]
    at_q2 = shared.run(python, thread, "answer", ASKED_Q1_ANSWERED, q1)
    assert [question["value"] for question in at_q2["interrupts"]] == ["q2"]
    return str(q1)


def ids(result: dict[str, Any]) -> list[str]:
    return [question["id"] for question in result["interrupts"]]


def test_the_brick_paused_on_the_older_release_takes_a_retried_answer_even_in_strict_mode(
    shared: Shared,
) -> None:
    q1 = paused_at_q2(shared, shared.older, "t")

    retried = shared.new("t", "answer", ASKED_Q1_ANSWERED, q1, "--strict")

    assert retried["out"] == "q1 got 'yes', q2 got 'yes'"  # q2 was never answered


def test_the_brick_paused_on_the_newest_drops_an_older_workers_answer_by_the_shown_id(
    shared: Shared,
) -> None:
    q1 = paused_at_q2(shared, NEWEST, "t")
    q2 = ids(shared.new("t", "state"))[0]

    answered = shared.old("t", "answer", "no", q2)

    assert q2 != q1
    assert answered["out"] is None  # the answer went nowhere, silently
    assert ids(answered) == [q1]  # and q2 is asked again under q1's id


def test_found_gated_rekeyed_resumed_and_undone(shared: Shared) -> None:
    q1 = paused_at_q2(shared, shared.older, "t")
    paused_rows = shared.writes()

    found = shared.command("scan")
    listed = shared.command("scan", "--waiting")
    shown_by_show = run_cli("show", shared.target, "--thread", "t")
    gate = shared.command("scan", "--interrupt-ids", "per-question")
    repaired = shared.command("repair", "--interrupt-ids", "per-question")
    after_rekey = shared.new("t", "state")
    shown = ids(after_rekey)
    rekeyed_rows = shared.writes()
    passes = shared.command("scan", "--interrupt-ids", "per-question")
    undone = run_cli("undo", shared.target, "--run", last_json(repaired.stdout)["run_id"], "--json")

    assert found.returncode == 0
    assert last_json(found.stdout)["findings"] == {"interrupt_id_shared": 1}
    [waiting] = last_json(listed.stdout)["waiting"]
    assert waiting["interrupts"] == [{"id": q1, "value": "q2", "node": "ask", "id_shared": True}]
    assert "interrupt_id_shared" in shown_by_show.stdout, shown_by_show.stderr
    assert gate.returncode == 1, gate.stderr
    assert "the interrupt ids' gate is closed: 1 thread(s)" in gate.stderr
    report = last_json(repaired.stdout)
    assert report["actions"] == {"interrupt_rekeyed": 1} and report["writes_rewritten"] == 1
    assert shown != [q1] and len(shown) == 1
    assert after_rekey["tags"] == TAGS  # the head keeps the thread's metadata
    assert passes.returncode == 0 and "findings" not in last_json(passes.stdout)
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["writes_restored"] == 1
    assert shared.writes() == paused_rows != rekeyed_rows  # byte for byte


def test_after_the_rekey_strict_refuses_the_retry_and_the_shown_id_reaches_q2(
    shared: Shared,
) -> None:
    q1 = paused_at_q2(shared, shared.older, "t")
    assert shared.command("repair", "--interrupt-ids", "per-question").returncode == 0
    q2 = ids(shared.new("t", "state"))[0]

    retried = shared.new("t", "answer", ASKED_Q1_ANSWERED, q1, "--strict")
    answered = shared.new("t", "answer", "no", q2, "--strict")

    assert retried == {"error": "UnknownInterruptError", "reason": "not_pending"}
    assert answered["out"] == "q1 got 'yes', q2 got 'no'"


def test_rolling_back_rekeys_for_the_older_release(shared: Shared) -> None:
    q1 = paused_at_q2(shared, NEWEST, "t")

    gate = shared.command("scan", "--interrupt-ids", "first")
    repaired = shared.command("repair", "--interrupt-ids", "first")
    shown = ids(shared.old("t", "state"))
    answered = shared.old("t", "answer", "no", shown[0])

    assert gate.returncode == 1
    assert last_json(gate.stdout)["findings"] == {"interrupt_id_mismatch": 1}
    assert last_json(repaired.stdout)["actions"] == {"interrupt_rekeyed": 1}
    assert shown == [q1]  # the id the older release computes for every question
    assert answered["out"] == "q1 got 'yes', q2 got 'no'"


def test_questions_asked_at_once_with_one_id_are_reported_and_left(shared: Shared) -> None:
    asked = shared.new("t", "start", "--at-once")
    before = shared.writes()

    found = shared.command("scan")
    repaired = shared.command("repair", "--interrupt-ids", "per-question")
    left = shared.writes()
    strict_plain = shared.new("t", "answer", "both", "--strict", "--at-once")

    assert len(set(ids(asked))) == 1 and len(ids(asked)) == 2  # the brick: one id, two asks
    assert "error" not in strict_plain  # strict mode counted one id: the plain answer passed
    assert last_json(found.stdout)["findings"] == {"interrupt_id_shared": 1}
    report = last_json(repaired.stdout)
    assert report["writes_rewritten"] == 0 and report["findings"] == {"interrupt_id_shared": 1}
    assert left == before


def test_one_question_and_finished_threads_are_not_flagged(shared: Shared) -> None:
    shared.old("waits-old", "start")
    shared.new("waits-new", "start")
    q1 = paused_at_q2(shared, NEWEST, "done")
    q2 = ids(shared.new("done", "state"))[0]
    assert shared.new("done", "answer", "no", q2)["out"] == "q1 got 'yes', q2 got 'no'"
    assert q1 != q2

    gates = [shared.command("scan", "--interrupt-ids", s) for s in ("per-question", "first")]

    for gate in gates:
        assert gate.returncode == 0, gate.stderr
        report = last_json(gate.stdout)
        assert "findings" not in report and report["waiting_heads"] == 2


def test_a_dry_run_counts_and_writes_nothing(shared: Shared) -> None:
    paused_at_q2(shared, shared.older, "t")
    before = shared.writes()

    dry = shared.command("repair", "--interrupt-ids", "per-question", "--dry-run")

    report = last_json(dry.stdout)
    assert report["actions"] == {"interrupt_rekeyed": 1} and report["writes_rewritten"] == 1
    assert report["threads_repaired"] == 1 and report["dry_run"] is True
    assert shared.writes() == before


def test_the_application_resuming_mid_run_wins(
    shared: Shared, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run read the question; the application answers it before the re-key is
    written: the run compares the head and the bytes, and leaves the thread."""
    paused_at_q2(shared, shared.older, "t")
    kind = SqliteStore if shared.target.startswith("sqlite:///") else PostgresStore
    rewrite = kind.rewrite_writes

    def application_answers_first(self: Any, run_id: str, plan: Any) -> Any:
        shared.new("t", "answer", "no")
        return rewrite(self, run_id, plan)

    monkeypatch.setattr(kind, "rewrite_writes", application_answers_first)
    assert run_cli("migrate", shared.target).returncode == 0
    with open_saver(shared.target) as saver:
        report = repair_threads(saver, min_idle=0, interrupt_ids="per-question")

    assert report.writes_rewritten == 0 and report.skipped == {"moved_on": 1}
    state = shared.new("t", "state")
    assert (state["interrupts"], state["out"]) == ([], "q1 got 'yes', q2 got 'no'")


@pytest.mark.parametrize(
    "argv",
    [
        ("scan", "{target}", "--interrupt-ids", "sometimes"),
        ("repair", "{target}", "--interrupt-ids"),
        ("undo", "{target}", "--run", "run-1", "--interrupt-ids", "first"),
    ],
)
def test_a_mistaken_option_is_one_line_and_writes_nothing(tmp_path: Any, argv: Any) -> None:
    path = tmp_path / "threads.sqlite"
    drive(NEWEST, str(path), "t", "start")
    before = Shared(str(path), f"sqlite:///{path}", "").writes()

    done = run_cli(*(arg.format(target=f"sqlite:///{path}") for arg in argv))

    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "--interrupt-ids" in done.stderr
    assert Shared(str(path), f"sqlite:///{path}", "").writes() == before


def test_a_role_without_update_on_the_writes_is_told_the_grant(
    pg_uri: str, make_role: MakeRole
) -> None:
    shared = Shared(pg_uri, pg_uri, older_python())
    paused_at_q2(shared, shared.older, "t")
    migrated(pg_uri)
    before = shared.writes()
    no_update = [g.replace("checkpoints, checkpoint_writes", "checkpoints") for g in WRITE_GRANTS]

    refused = run_cli(
        "repair", make_role(no_update), "--min-idle", "0", "--interrupt-ids", "per-question"
    )
    granted = run_cli(
        "repair", make_role(WRITE_GRANTS), "--min-idle", "0", "--interrupt-ids", "per-question",
        "--json",
    )  # fmt: skip

    assert "UPDATE on checkpoint_writes" in one_line_error(refused)
    assert last_json(granted.stdout)["actions"] == {"interrupt_rekeyed": 1}
    assert shared.writes() != before
