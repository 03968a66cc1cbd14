"""A stale answer repaired on PostgreSQL: `repair` deletes exactly the null task's
`__resume__` write (action `resume_dropped`), audited with its bytes, so that LangGraph
asks the question again; `undo` puts the row back byte for byte, unless its slot was
filled since. `--policy stale_resume=keep` and `--dry-run` leave it; an answer given
while the run looked is never deleted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import aundo_run, repair_threads
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from langgraph_checkpoint_repair.targets import aopen_saver
from tests.support.asking_graphs import SECOND, SHAPES, answer_first, asked, build, thread
from tests.support.cli_runs import last_json, run_cli, start_cli
from tests.support.stores import Store

NEW_ANSWER = b"\xa2no"
ANSWER_AGAIN = """
UPDATE checkpoint_writes SET blob = %s
WHERE task_id = '00000000-0000-0000-0000-000000000000' AND channel = '__resume__'
    AND thread_id = %s"""
NULL_ANSWER = """
SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
FROM checkpoint_writes WHERE task_id = '00000000-0000-0000-0000-000000000000'
    AND channel = '__resume__' ORDER BY thread_id"""


def null_answers(uri: str) -> list[Any]:
    with psycopg.connect(uri) as conn:
        return conn.execute(NULL_ANSWER).fetchall()


@pytest.fixture
def asking(pg_uri: str) -> Iterator[Store]:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        yield Store(saver, is_async=False)


async def seed(store: Store) -> None:
    for shape in SHAPES:
        await answer_first(store, build(shape, store.saver), shape, thread(f"stale-{shape}"))


def repair(uri: str, *extra: str) -> dict[str, Any]:
    assert run_cli("migrate", uri).returncode == 0
    done = run_cli("repair", uri, "--min-idle", "0", "--json", *extra)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


@pytest.mark.parametrize("shape", SHAPES)
async def test_after_repair_the_question_is_asked_again_and_undo_brings_the_row_back(
    pg_uri: str, asking: Store, shape: str
) -> None:
    await answer_first(asking, build(shape, asking.saver), shape, thread("t"))
    before = null_answers(pg_uri)

    report = repair(pg_uri)
    after_repair = null_answers(pg_uri)
    undone = run_cli("undo", pg_uri, "--run", report["run_id"], "--json")
    after_undo = null_answers(pg_uri)
    stale_again = await asking.invoke(build(shape, asking.saver), None, thread("t"))

    assert len(before) == 1 and after_repair == []
    assert report["actions"] == {"resume_dropped": 1} and report["writes_rewritten"] == 1
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["writes_restored"] == 1
    assert after_undo == before  # byte for byte, in its slot
    assert stale_again["out"].endswith("'yes'+'yes'")  # and the brick with it


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_repaired_thread_asks_again_and_takes_a_real_answer(
    pg_uri: str, asking: Store, shape: str
) -> None:
    await answer_first(asking, build(shape, asking.saver), shape, thread("t"))
    repair(pg_uri)
    graph = build(shape, asking.saver)

    again = await asking.invoke(graph, None, thread("t"))
    answered = await asking.invoke(graph, Command(resume="no"), thread("t"))

    assert asked(again) == [SECOND]
    assert answered["out"].endswith("'yes'+'no'")


async def test_a_second_run_finds_nothing_to_do(pg_uri: str, asking: Store) -> None:
    await seed(asking)

    first, second = repair(pg_uri), repair(pg_uri)

    assert first["writes_rewritten"] == 3 and second["writes_rewritten"] == 0
    assert "stale_resume" not in second.get("findings", {})


@pytest.mark.parametrize(
    ("extra", "counted"), [(["--policy", "stale_resume=keep"], 0), (["--dry-run"], 3)]
)
async def test_keep_and_a_dry_run_leave_the_row(
    pg_uri: str, asking: Store, extra: list[str], counted: int
) -> None:
    """`keep` reports the finding and deletes nothing; a dry run counts what a run would
    delete, and deletes nothing."""
    await seed(asking)
    before = null_answers(pg_uri)

    report = repair(pg_uri, *extra)

    assert null_answers(pg_uri) == before
    assert report["findings"] == {"stale_resume": 3} and report["writes_rewritten"] == counted


async def test_an_answer_given_since_it_was_read_is_never_deleted(
    pg_uri: str, asking: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run reads the stale row; the application then stores a new answer in its slot
    before the run deletes it: the run compares the bytes and leaves the new one."""
    await seed(asking)
    read = PostgresStore.stored_values

    def read_then_application_answers(store: PostgresStore, key: Any) -> Any:
        values = read(store, key)
        with psycopg.connect(pg_uri) as conn:
            conn.execute(ANSWER_AGAIN, (NEW_ANSWER, key[0]))
        return values

    monkeypatch.setattr(PostgresStore, "stored_values", read_then_application_answers)
    assert run_cli("migrate", pg_uri).returncode == 0
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        report = repair_threads(saver, min_idle=0)

    assert report.writes_rewritten == 0 and report.skipped == {"moved_on": 3}
    assert [bytes(row[-1]) for row in null_answers(pg_uri)] == [NEW_ANSWER] * 3


async def test_undo_leaves_a_slot_filled_since(pg_uri: str, asking: Store) -> None:
    await answer_first(asking, build("one_task", asking.saver), "one_task", thread("t"))
    report = repair(pg_uri)
    await asking.invoke(build("one_task", asking.saver), {"out": "again"}, thread("other"))
    with psycopg.connect(pg_uri) as conn:  # the application answers: the slot is filled
        conn.execute(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, "
            "idx, channel, type, blob) SELECT thread_id, checkpoint_ns, checkpoint_id, "
            "'00000000-0000-0000-0000-000000000000', -4, '__resume__', 'msgpack', %s "
            "FROM checkpoint_writes WHERE thread_id = 't' AND channel = '__interrupt__'",
            (b"\xa5maybe",),
        )
    filled = null_answers(pg_uri)

    async with aopen_saver(pg_uri) as saver:
        undone = await aundo_run(saver, report["run_id"])

    assert undone.writes_restored == 0
    assert [entry["reason"] for entry in undone.skipped] == ["moved_on"]
    assert null_answers(pg_uri) == filled


async def test_two_runs_at_once_delete_each_stale_answer_once(pg_uri: str, asking: Store) -> None:
    for n in range(12):
        await answer_first(asking, build("one_task", asking.saver), "one_task", thread(f"s{n}"))
    assert run_cli("migrate", pg_uri).returncode == 0

    runs = [start_cli("repair", pg_uri, "--min-idle", "0", "--json") for _ in range(2)]
    reports = [last_json(run.communicate(timeout=120)[0]) for run in runs]

    assert sum(report["writes_rewritten"] for report in reports) == 12
    assert null_answers(pg_uri) == []
