"""A stale answer repaired, on SQLite and PostgreSQL: `repair` deletes exactly the null
task's `__resume__` write (action `resume_dropped`), audited with its bytes, so that
LangGraph asks the question again; `undo` puts the row back byte for byte, unless its
slot was filled since. `--policy stale_resume=keep` and `--dry-run` leave it; an answer
given while the run looked is never deleted; two runs at once delete each answer once."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import aundo_run, repair_threads
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from langgraph_checkpoint_repair.stores.sqlite import SqliteStore
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.asking_graphs import SECOND, SHAPES, answer_first, asked, build, thread
from tests.support.cli_runs import last_json, run_cli, start_cli
from tests.support.report_checks import apart_from_ids
from tests.support.stores import Store, cli_store

NULL_TASK = "00000000-0000-0000-0000-000000000000"
NEW_ANSWER = b"\xa2no"


@dataclass(frozen=True)
class Rows:
    """The store's pending writes, as SQL sees them (`?` for a parameter)."""

    target: str

    @property
    def on_sqlite(self) -> bool:
        return self.target.startswith("sqlite:///")

    def execute(self, statement: str, *params: Any) -> list[Any]:
        table, blob = ("writes", "value") if self.on_sqlite else ("checkpoint_writes", "blob")
        statement = statement.format(writes=table, blob=blob)
        if self.on_sqlite:
            path = self.target.removeprefix("sqlite:///")
            with contextlib.closing(sqlite3.connect(path)) as conn, conn:
                return conn.execute(statement, params).fetchall()
        with psycopg.connect(self.target) as pg:
            cursor = pg.execute(statement.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []

    def null_answers(self) -> list[Any]:
        """Every null-task answer, whole (each column the saver's table has), its bytes last."""
        return self.execute(
            "SELECT *, {blob} FROM {writes} WHERE task_id = ? AND channel = '__resume__' "
            "ORDER BY thread_id",
            NULL_TASK,
        )

    def answer_again(self, thread_id: str) -> None:
        """The application stores a new answer in the stale one's slot."""
        self.execute(
            "UPDATE {writes} SET {blob} = ? WHERE task_id = ? AND channel = '__resume__' "
            "AND thread_id = ?",
            NEW_ANSWER,
            NULL_TASK,
            thread_id,
        )


@pytest.fixture(params=["sqlite", "postgres"])
def asking(request: pytest.FixtureRequest) -> Iterator[tuple[Rows, Store]]:
    with cli_store(request.param, request) as (target, store):
        yield Rows(target), store


async def seed(store: Store) -> None:
    for shape in SHAPES:
        await answer_first(store, build(shape, store.saver), shape, thread(f"stale-{shape}"))


def repair(rows: Rows, *extra: str) -> dict[str, Any]:
    assert run_cli("migrate", rows.target).returncode == 0
    done = run_cli("repair", rows.target, "--min-idle", "0", "--json", *extra)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


@pytest.mark.parametrize("shape", SHAPES)
async def test_after_repair_the_question_is_asked_again_and_undo_brings_the_row_back(
    asking: tuple[Rows, Store], shape: str
) -> None:
    rows, store = asking
    await answer_first(store, build(shape, store.saver), shape, thread("t"))
    before = rows.null_answers()

    report = repair(rows)
    after_repair = rows.null_answers()
    undone = run_cli("undo", rows.target, "--run", report["run_id"], "--json")
    after_undo = rows.null_answers()
    stale_again = await store.invoke(build(shape, store.saver), None, thread("t"))

    assert len(before) == 1 and after_repair == []
    assert report["actions"] == {"resume_dropped": 1} and report["writes_rewritten"] == 1
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["writes_restored"] == 1
    assert after_undo == before  # byte for byte, in its slot
    assert stale_again["out"].endswith("'yes'+'yes'")  # and the brick with it


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_repaired_thread_asks_again_and_takes_a_real_answer(
    asking: tuple[Rows, Store], shape: str
) -> None:
    rows, store = asking
    await answer_first(store, build(shape, store.saver), shape, thread("t"))
    repair(rows)
    graph = build(shape, store.saver)

    again = await store.invoke(graph, None, thread("t"))
    answered = await store.invoke(graph, Command(resume="no"), thread("t"))

    assert asked(again) == [SECOND]
    assert answered["out"].endswith("'yes'+'no'")


async def test_a_second_run_finds_nothing_to_do(asking: tuple[Rows, Store]) -> None:
    rows, store = asking
    await seed(store)

    first, second = repair(rows), repair(rows)

    assert first["writes_rewritten"] == 3 and second["writes_rewritten"] == 0
    assert "stale_resume" not in second.get("findings", {})


@pytest.mark.parametrize(
    ("extra", "counted"), [(["--policy", "stale_resume=keep"], 0), (["--dry-run"], 3)]
)
async def test_keep_and_a_dry_run_leave_the_row(
    asking: tuple[Rows, Store], extra: list[str], counted: int
) -> None:
    """`keep` reports the finding and deletes nothing; a dry run counts what a run would
    delete, and deletes nothing."""
    rows, store = asking
    await seed(store)
    before = rows.null_answers()

    report = repair(rows, *extra)

    assert rows.null_answers() == before
    assert apart_from_ids(report["findings"]) == {"stale_resume": 3}
    assert report["writes_rewritten"] == counted


async def test_an_answer_given_since_it_was_read_is_never_deleted(
    asking: tuple[Rows, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run reads the stale row; the application then stores a new answer in its slot
    before the run deletes it: the run compares the bytes and leaves the new one."""
    rows, store = asking
    await seed(store)
    kind = SqliteStore if rows.on_sqlite else PostgresStore
    delete = kind.rewrite_writes

    def application_answers_then_delete(self: Any, run_id: str, plan: Any) -> Any:
        rows.answer_again(plan.thread_id)  # after the run read the row, before it deletes
        return delete(self, run_id, plan)

    monkeypatch.setattr(kind, "rewrite_writes", application_answers_then_delete)
    assert run_cli("migrate", rows.target).returncode == 0
    with open_saver(rows.target) as saver:
        report = repair_threads(saver, min_idle=0)

    assert report.writes_rewritten == 0 and report.skipped == {"moved_on": 3}
    assert [bytes(row[-1]) for row in rows.null_answers()] == [NEW_ANSWER] * 3


async def test_undo_leaves_a_slot_filled_since(asking: tuple[Rows, Store]) -> None:
    rows, store = asking
    await answer_first(store, build("one_task", store.saver), "one_task", thread("t"))
    report = repair(rows)
    rows.execute(  # the application answers: the slot is filled
        "INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, "
        "type, {blob}) SELECT thread_id, checkpoint_ns, checkpoint_id, ?, -4, '__resume__', "
        "'msgpack', ? FROM {writes} WHERE thread_id = 't' AND channel = '__interrupt__'",
        NULL_TASK,
        b"\xa5maybe",
    )
    filled = rows.null_answers()

    async with aopen_saver(rows.target) as saver:
        undone = await aundo_run(saver, report["run_id"])

    assert len(filled) == 1 and undone.writes_restored == 0
    assert [entry["reason"] for entry in undone.skipped] == ["moved_on"]
    assert rows.null_answers() == filled


async def test_two_runs_at_once_delete_each_stale_answer_once(asking: tuple[Rows, Store]) -> None:
    rows, store = asking
    for n in range(12):
        await answer_first(store, build("one_task", store.saver), "one_task", thread(f"s{n}"))
    assert run_cli("migrate", rows.target).returncode == 0

    runs = [start_cli("repair", rows.target, "--min-idle", "0", "--json") for _ in range(2)]
    reports = [last_json(run.communicate(timeout=120)[0]) for run in runs]

    assert sum(report["writes_rewritten"] for report in reports) == 12
    assert rows.null_answers() == []
