"""A run asks for the privileges its policy can use, and no more, on real roles: without
DELETE a role repairs and undoes with `stale_resume=keep` (the default policy, which
drops stale answers, gets the one line and writes nothing); an undo needs INSERT on the
writes only when its run dropped an answer. The changes made in place compare the bytes
as they make them, so none needs a row lock (which PostgreSQL grants only with UPDATE)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from langgraph_checkpoint_repair import RepairPolicy
from langgraph_checkpoint_repair.batch import arepair_threads, repair_threads
from langgraph_checkpoint_repair.stores import StoreNotReady
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from langgraph_checkpoint_repair.targets import open_saver
from tests.support.asking_graphs import answer_first, build, thread
from tests.support.cli_runs import last_json, postgres_rows, run_cli
from tests.support.histories import ai, human
from tests.support.report_checks import apart_from_ids
from tests.support.roles import (
    WRITE_GRANTS,
    MakeRole,
    migrated,
    one_line_error,
)
from tests.support.seeding import put_in_namespace
from tests.support.stores import Store

NULL_TASK = "00000000-0000-0000-0000-000000000000"
WITHOUT_DELETE = [grant.replace("INSERT, DELETE", "INSERT") for grant in WRITE_GRANTS]
KEEP = ("--policy", "stale_resume=keep")


@pytest.fixture
async def asking_store(pg_uri: str) -> str:
    """A broken thread and a thread whose head holds a stale answer, set up by the owner
    and migrated."""
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        await put_in_namespace(store, "broken", "", [human("a"), ai("a1", "c1"), human("b")])
        await answer_first(store, build("one_task", saver), "one_task", thread("stale"))
    migrated(pg_uri)
    return pg_uri


def stale_answers(uri: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute(
            "SELECT thread_id, blob FROM checkpoint_writes "
            "WHERE task_id = %s AND channel = '__resume__'",
            (NULL_TASK,),
        ).fetchall()


def test_without_delete_a_role_repairs_and_undoes_keeping_stale_answers(
    asking_store: str, make_role: MakeRole
) -> None:
    role = make_role(WITHOUT_DELETE)
    answers = stale_answers(asking_store)

    repaired = run_cli("repair", role, "--min-idle", "0s", "--json", *KEEP)
    assert repaired.returncode == 0, repaired.stderr
    report = last_json(repaired.stdout)
    undone = run_cli("undo", role, "--run", report["run_id"], "--json")

    assert report["threads_repaired"] == 1 and report["writes_rewritten"] == 0
    assert apart_from_ids(report["findings"]) == {"stale_resume": 1}
    assert stale_answers(asking_store) == answers
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["threads_restored"] == 1


async def test_the_async_store_asks_the_same(asking_store: str, make_role: MakeRole) -> None:
    role = make_role(WITHOUT_DELETE)
    before = postgres_rows(asking_store)

    async with AsyncPostgresSaver.from_conn_string(role) as saver:
        with pytest.raises(StoreNotReady, match="lacks DELETE on checkpoint_writes"):
            await arepair_threads(saver, min_idle=0)
        assert postgres_rows(asking_store) == before
        kept = await arepair_threads(saver, min_idle=0, policy=RepairPolicy(stale_resume="keep"))

    assert kept.threads_repaired == 1 and kept.writes_rewritten == 0


def test_without_delete_the_default_policy_gets_one_line_and_writes_nothing(
    asking_store: str, make_role: MakeRole
) -> None:
    role_uri = make_role(WITHOUT_DELETE)
    role = urlsplit(role_uri).username
    before = postgres_rows(asking_store)

    line = one_line_error(run_cli("repair", role_uri, "--min-idle", "0s"))

    assert "lacks DELETE on checkpoint_writes" in line
    assert f"GRANT DELETE ON checkpoint_writes TO {role};" in line
    assert postgres_rows(asking_store) == before


def test_undoing_a_dropped_answer_needs_insert_and_names_it_before_any_write(
    asking_store: str, make_role: MakeRole
) -> None:
    answers = stale_answers(asking_store)
    repaired = run_cli("repair", asking_store, "--min-idle", "0s", "--json")
    run_id = last_json(repaired.stdout)["run_id"]
    assert stale_answers(asking_store) == []
    without_insert = [grant.replace("INSERT, DELETE", "DELETE") for grant in WRITE_GRANTS]
    role_uri = make_role(without_insert)
    before = postgres_rows(asking_store)

    line = one_line_error(run_cli("undo", role_uri, "--run", run_id))
    assert "lacks INSERT on checkpoint_writes" in line
    assert postgres_rows(asking_store) == before

    undone = run_cli("undo", make_role(WRITE_GRANTS), "--run", run_id, "--json")
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["writes_restored"] == 1
    assert stale_answers(asking_store) == answers


def test_undoing_a_run_that_only_appended_needs_no_change_to_the_writes(
    asking_store: str, make_role: MakeRole
) -> None:
    repaired = run_cli("repair", asking_store, "--min-idle", "0s", "--json", *KEEP)
    run_id = last_json(repaired.stdout)["run_id"]
    appending = [
        grant.replace("UPDATE ON checkpoints, checkpoint_writes", "UPDATE ON checkpoints")
        for grant in WRITE_GRANTS
        if "DELETE" not in grant
    ]

    undone = run_cli("undo", make_role(appending), "--run", run_id, "--json")

    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["threads_restored"] == 1


def test_an_answer_given_between_the_read_and_the_delete_is_kept(
    asking_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run has read the stale answer's bytes and compared them; the application then
    answers again in the same slot before the delete: the delete finds other bytes, the
    whole change is undone, and the new answer stays."""
    read = PostgresStore._current_blobs

    def application_answers_after_the_read(self: Any, conn: Any, writes: Any) -> Any:
        found = read(self, conn, writes)
        with psycopg.connect(asking_store, autocommit=True) as other:
            other.execute(
                "UPDATE checkpoint_writes SET blob = %s WHERE task_id = %s AND thread_id = %s "
                "AND channel = '__resume__'",
                (b"\xa2no", NULL_TASK, "stale"),
            )
        return found

    monkeypatch.setattr(PostgresStore, "_current_blobs", application_answers_after_the_read)
    with open_saver(asking_store) as saver:
        report = repair_threads(saver, min_idle=0, threads=["stale"])

    assert report.writes_rewritten == 0 and report.skipped == {"moved_on": 1}
    assert [(thread_id, bytes(blob)) for thread_id, blob in stale_answers(asking_store)] == [
        ("stale", b"\xa2no")
    ]
