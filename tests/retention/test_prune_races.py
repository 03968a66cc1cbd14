"""Prunes racing real processes: applications writing the threads meanwhile (delta threads
too, compacted), a second prune at once, a prune killed mid-run. Nothing is lost, no
thread is left half-pruned, and a rerun finishes the work."""

from __future__ import annotations

import itertools
import signal
import subprocess
import time
from pathlib import Path
from subprocess import PIPE
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.batch.pruning import undo_prune
from langgraph_checkpoint_repair.stores.postgres.prune_sql import THREAD_LOCK_SQL
from tests.batch.test_batch_races import start_application, wait_until_writing, written_by
from tests.support.agents import chat_graph
from tests.support.cli_runs import CHILD, child_env, last_json, run_cli
from tests.support.pruning import clone_thread, execute, stored_rows
from tests.support.seeding import config
from tests.support.stores import Store, cli_store

KINDS = ["postgres", "sqlite"]
REPO = Path(__file__).resolve().parents[2]


def seed_chats(store: Store, thread_id: str, turns: int) -> None:
    graph = chat_graph(store.saver)
    for turn in range(turns):
        graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config(thread_id))


def many_chats(store: Store, name: str, threads: int) -> list[str]:
    """`threads` threads of three turns each: one seeded, the others its copies."""
    seed_chats(store, name, 3)
    return [name, *clone_thread(store.saver, name, threads - 1)]


def checkpoints_per_thread(store: Store) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in stored_rows(store.saver)["checkpoints"]:
        counts[row[0]] = counts.get(row[0], 0) + 1
    return counts


def start_prune(target: str, *argv: str) -> subprocess.Popen[str]:
    command = [*CHILD, "prune", target, "--min-idle", "0", "--json", *argv]
    return subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True, cwd=REPO, env=child_env())


def runs_while_writing(
    target: str, stop: Path, threads: list[str], commands: list[tuple[str, ...]], graph: str
) -> tuple[list[Any], list[dict[str, list[str]]]]:
    """Each command, run while two application processes (`graph`) write the threads;
    the runs, each checked to succeed, and what each application wrote."""
    apps = [start_application(target, stop, n, threads[n::2], graph) for n in range(2)]
    for app in apps:
        wait_until_writing(app, stop)
    try:
        runs = [run_cli(*command) for command in commands]
    finally:
        stop.touch()
    written = [written_by(app) for app in apps]
    for run in runs:
        assert run.returncode == 0, run.stderr
    return runs, written


@pytest.mark.parametrize("kind", KINDS)
async def test_applications_writing_during_prunes_lose_nothing(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    stop = tmp_path / "stop"
    with cli_store(kind, request) as (target, store):
        threads = [f"live-{n}" for n in range(6)]
        for thread_id in threads:
            seed_chats(store, thread_id, 2)
        pruning = ("prune", target, "--min-idle", "0", "--json")
        runs, written = runs_while_writing(target, stop, threads, [pruning] * 4, "chat")
        assert sum(last_json(run.stdout)["threads_pruned"] for run in runs) > 0
        graph = chat_graph(store.saver)
        for thread_id in threads:
            texts = [m.content for m in graph.get_state(config(thread_id)).values["messages"]]
            assert texts[:2] == ["turn 0", "hi"], thread_id
            for app_written in written:
                mine = app_written.get(thread_id, [])
                assert [t for t in texts if t in mine] == mine, thread_id


@pytest.mark.parametrize("kind", KINDS)
async def test_applications_writing_delta_threads_during_compacting_prunes_lose_nothing(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    pytest.importorskip("deepagents", reason="delta channels need langgraph 1.2")
    from tests.support.delta_agents import delta_chat

    stop = tmp_path / "stop"
    with cli_store(kind, request) as (target, store):
        graph = delta_chat(store.saver)
        threads = [f"deep-{n}" for n in range(6)]
        for thread_id, turn in itertools.product(threads, range(7)):
            graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config(thread_id))
        compacting = ("prune", target, "--min-idle", "0", "--compact", "--json")
        runs, written = runs_while_writing(target, stop, threads, [compacting] * 2, "delta")
        assert sum(last_json(run.stdout)["threads_compacted"] for run in runs) > 0
        for thread_id in threads:
            texts = [m.content for m in graph.get_state(config(thread_id)).values["messages"]]
            assert texts[:2] == ["turn 0", "hi"], thread_id
            assert texts.count("hi") >= 7, thread_id
            for app_written in written:
                mine = app_written.get(thread_id, [])
                assert [t for t in texts if t in mine] == mine, thread_id


@pytest.mark.parametrize("kind", KINDS)
async def test_writes_saved_before_their_checkpoint_survive(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        seed_chats(store, "early", 3)
        head = store.saver.get_tuple(config("early"))
        assert head is not None
        # A run saves a superstep's writes; its checkpoint, newer than the head, lands later.
        landing = dict(head.config["configurable"])
        landing["checkpoint_id"] = landing["checkpoint_id"][:-1] + "z"  # sorts after the head
        store.saver.put_writes(
            {"configurable": landing}, [("messages", [HumanMessage("early")])], "task-1"
        )
        table = "checkpoint_writes" if isinstance(store.saver, PostgresSaver) else "writes"
        query = f"SELECT count(*) FROM {table} WHERE thread_id = ? AND checkpoint_id = ?"
        assert execute(store.saver, query, ("early", landing["checkpoint_id"]))[0][0] == 1

        pruned = run_cli("prune", target, "--min-idle", "0", "--json")

        assert pruned.returncode == 0, pruned.stderr
        assert last_json(pruned.stdout)["checkpoints_deleted"] == 8
        assert execute(store.saver, query, ("early", landing["checkpoint_id"]))[0][0] == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_two_prunes_at_once_prune_each_thread_once(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        threads = many_chats(store, "twice", 60)
        before = stored_rows(store.saver)

        runs = [start_prune(target) for _ in range(2)]
        reports = []
        for run in runs:
            out, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
            reports.append(last_json(out))

        assert sum(report["threads_pruned"] for report in reports) == len(threads)
        assert checkpoints_per_thread(store) == dict.fromkeys(threads, 1)
        for report in reports:
            undo_prune(store.saver, report["run_id"])
        assert stored_rows(store.saver) == before


def killed_mid_run(target: str, store: Store, threads: list[str]) -> None:
    """A prune killed (SIGKILL) once it has pruned some threads, before it pruned all."""
    run = start_prune(target)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            pruned = sum(1 for n in checkpoints_per_thread(store).values() if n == 1)
            if pruned:
                break
            time.sleep(0.005)
    finally:
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=60)
    left = checkpoints_per_thread(store)
    assert 0 < sum(1 for t in threads if left[t] == 1) < len(threads), "not killed mid-run"


def runs_table(store: Store) -> str:
    return (
        "langgraph_repair_runs"
        if isinstance(store.saver, PostgresSaver)
        else "langgraph_repair_prune_runs"
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_a_prune_killed_mid_run_leaves_no_thread_half_pruned(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        threads = many_chats(store, "killed", 400)
        before = stored_rows(store.saver)
        whole = checkpoints_per_thread(store)["killed"]

        killed_mid_run(target, store, threads)

        assert set(checkpoints_per_thread(store).values()) == {1, whole}  # pruned, or untouched
        (killed_run,) = execute(store.saver, f"SELECT run_id FROM {runs_table(store)}")
        finished = run_cli("prune", target, "--min-idle", "0", "--json")
        assert finished.returncode == 0, finished.stderr
        assert checkpoints_per_thread(store) == dict.fromkeys(threads, 1)
        for run_id in (killed_run[0], last_json(finished.stdout)["run_id"]):
            undo_prune(store.saver, run_id)
        assert stored_rows(store.saver) == before


async def test_a_thread_another_prune_holds_is_skipped_then_pruned(
    request: pytest.FixtureRequest,
) -> None:
    with cli_store("postgres", request) as (target, store):
        seed_chats(store, "held", 3)
        seed_chats(store, "free", 3)
        with psycopg.connect(target) as other:  # another prune, mid-transaction on "held"
            other.execute(THREAD_LOCK_SQL, ("held",))
            first = run_cli("prune", target, "--min-idle", "0", "--json")
        second = run_cli("prune", target, "--min-idle", "0", "--json")

        assert first.returncode == 0, first.stderr
        assert last_json(first.stdout)["skipped"] == {"claimed": 1}
        assert last_json(first.stdout)["threads_pruned"] == 1
        assert last_json(second.stdout)["threads_pruned"] == 1
        assert checkpoints_per_thread(store) == {"held": 1, "free": 1}


async def test_a_thread_held_in_another_schema_is_another_thread(
    request: pytest.FixtureRequest, other_pg_uri: str
) -> None:
    """An advisory lock is the whole database's: a prune (or a rollback) of thread "held"
    in one schema's tables must not skip the thread of the same id in another's."""
    with cli_store("postgres", request) as (target, store):
        seed_chats(store, "held", 3)
        with psycopg.connect(other_pg_uri) as other:  # a prune of another schema's "held"
            other.execute(THREAD_LOCK_SQL, ("held",))
            pruned = run_cli("prune", target, "--min-idle", "0", "--json")

        assert pruned.returncode == 0, pruned.stderr
        assert last_json(pruned.stdout)["skipped"] == {}
        assert checkpoints_per_thread(store) == {"held": 1}
