"""`langgraph-repair prune`, `undo` of a prune and `forget`, run as a child process: what
they print, what they leave, and the mistakes a tired operator makes (one line, exit 2,
nothing written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.cli.test_cli_views import in_a_terminal
from tests.support.cli_runs import last_json, postgres_rows, run_cli, sqlite_rows
from tests.support.factories import POSTGRES_ENV
from tests.support.pruning import plain_chat, thread


def seed_chats(saver: Any, threads: int = 2, turns: int = 3) -> None:
    graph = plain_chat(saver)
    for n in range(threads):
        for turn in range(turns):
            graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, thread(f"t{n}"))


@pytest.fixture
def sqlite_store(tmp_path: Path) -> tuple[str, Path]:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        seed_chats(saver)
    return f"sqlite:///{path}", path


def test_prune_then_undo_then_forget_on_sqlite(sqlite_store: tuple[str, Path]) -> None:
    target, path = sqlite_store
    before = sqlite_rows(path)

    dry = run_cli("prune", target, "--min-idle", "0", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert last_json(dry.stdout)["checkpoints_deleted"] == 16
    assert sqlite_rows(path) == before

    pruned = run_cli("prune", target, "--min-idle", "0")
    assert pruned.returncode == 0, pruned.stderr
    assert "VACUUM" in pruned.stdout and "undo with --run run-" in pruned.stdout
    assert len(sqlite_rows(path)) == 3  # two heads, one count of writes
    run_id = pruned.stdout.split("undo with --run ")[1].split(";")[0]

    undone = run_cli("undo", target, "--run", run_id, "--json")
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["threads_restored"] == 2
    assert sqlite_rows(path) == before

    again = run_cli("prune", target, "--min-idle", "0", "--json")
    forgot = run_cli("forget", target, "--run", last_json(again.stdout)["run_id"])
    assert forgot.returncode == 0, forgot.stderr
    assert "can no longer be undone" in forgot.stdout
    nothing = run_cli("undo", target, "--run", last_json(again.stdout)["run_id"], "--json")
    assert last_json(nothing.stdout)["threads_restored"] == 0
    assert len(sqlite_rows(path)) == 3


def test_list_prints_each_pruned_thread(sqlite_store: tuple[str, Path]) -> None:
    target, _ = sqlite_store
    listed = run_cli("prune", target, "--min-idle", "0", "--list", "--thread", "t1")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["t1"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--keep-last", "0"], "not a positive whole number: '0'"),
        (["--keep-last", "-2"], "not a positive whole number: '-2'"),
        (["--keep-last", "many"], "not a positive whole number: 'many'"),
        (["--min-idle", "soon"], "not a duration: 'soon'"),
        (["--delete-idle", "a month"], "not a duration: 'a month'"),
        (["--include-waiting"], "--include-waiting goes with --delete-idle"),
    ],
)
def test_a_bad_option_is_one_line_and_writes_nothing(
    sqlite_store: tuple[str, Path], argv: list[str], said: str
) -> None:
    target, path = sqlite_store
    before = sqlite_rows(path)
    result = run_cli("prune", target, *argv)
    assert result.returncode == 2
    assert said in result.stderr and len(result.stderr.splitlines()) == 1
    assert sqlite_rows(path) == before


@pytest.mark.parametrize("command", ["undo", "forget"])
def test_an_unknown_run_is_one_line(sqlite_store: tuple[str, Path], command: str) -> None:
    target, path = sqlite_store
    before = sqlite_rows(path)
    result = run_cli(command, target, "--run", "run-nope")
    assert result.returncode == 2
    assert "run-nope" in result.stderr and len(result.stderr.splitlines()) == 1
    assert sqlite_rows(path) == before


def test_a_missing_sqlite_file_is_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "threads.sqlite"
    result = run_cli("prune", f"sqlite:///{missing}")
    assert result.returncode == 2 and "no such SQLite file" in result.stderr
    assert not missing.exists()


def test_a_saver_reached_only_through_its_api_is_refused_in_one_line() -> None:
    result = run_cli("prune", "tests.support.memory_target:saver")
    assert result.returncode == 2
    assert "InMemorySaver is reached only through its API" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_an_async_saver_from_a_factory_is_pruned_undone_and_forgotten(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_chats(saver)
    factory = "tests.support.factories:async_postgres_saver"
    env = {POSTGRES_ENV: pg_uri}

    pruned = run_cli("prune", factory, "--min-idle", "0", "--json", **env)
    assert pruned.returncode == 0, pruned.stderr
    run_id = last_json(pruned.stdout)["run_id"]
    assert last_json(pruned.stdout)["threads_pruned"] == 2
    undone = run_cli("undo", factory, "--run", run_id, "--json", **env)
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["threads_restored"] == 2
    forgot = run_cli("forget", factory, "--run", run_id, "--json", **env)
    assert forgot.returncode == 0, forgot.stderr
    assert last_json(forgot.stdout)["archived_rows_dropped"] == 0  # undo emptied it


def test_vacuum_gives_a_sqlite_files_pages_back(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        seed_chats(saver, threads=20, turns=6)
    size = path.stat().st_size

    pruned = run_cli("prune", f"sqlite:///{path}", "--min-idle", "0", "--no-archive", "--vacuum")

    assert pruned.returncode == 0, pruned.stderr
    assert "without its free pages" in pruned.stdout
    assert path.stat().st_size < size / 2


def test_vacuum_on_postgresql_is_refused_before_anything_is_deleted(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_chats(saver)
    before = postgres_rows(pg_uri)

    refused = run_cli("prune", pg_uri, "--min-idle", "0", "--vacuum")

    assert refused.returncode == 2
    assert "VACUUM FULL" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert postgres_rows(pg_uri) == before


def test_shards_prune_every_thread_once(sqlite_store: tuple[str, Path]) -> None:
    target, path = sqlite_store
    with SqliteSaver.from_conn_string(str(path)) as saver:
        seed_chats(saver, threads=12)
    pruned = [
        last_json(run_cli("prune", target, "--min-idle", "0", "--shard", f"{k}/3", "--json").stdout)
        for k in range(3)
    ]
    assert sum(report["threads_pruned"] for report in pruned) == 12
    assert all(report["threads_pruned"] < 12 for report in pruned)
    assert len(sqlite_rows(path)) == 13  # a head per thread, and the count of writes


def test_progress_in_a_terminal_counts_threads_and_pruned_ones(
    sqlite_store: tuple[str, Path],
) -> None:
    target, _ = sqlite_store
    looked = in_a_terminal("prune", target, "--min-idle", "0", "--dry-run")
    assert "looking at 2 threads" in looked and "2 pruned" in looked
    pruned = in_a_terminal("prune", target, "--min-idle", "0")
    assert "pruning 2 threads" in pruned and "2 pruned" in pruned


LOSE_THE_SESSION = (
    """CREATE FUNCTION lose_the_session() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.thread_id = 't1' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
        RETURN OLD;
    END $$""",
    """CREATE TRIGGER lose_the_session BEFORE DELETE ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION lose_the_session()""",
)
"""The server ends the prune's session as it deletes the second thread's rows."""


def test_a_store_lost_mid_prune_says_what_was_pruned_and_exits_1(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_chats(saver)
        for statement in LOSE_THE_SESSION:
            saver.conn.execute(statement)  # type: ignore[union-attr]
    before = checkpoints_by_thread(pg_uri)

    lost = run_cli("prune", pg_uri, "--min-idle", "0")

    assert lost.returncode == 1, lost.stderr
    assert "after 1 threads pruned; run the command again to finish" in lost.stderr
    assert "Traceback" not in lost.stderr
    assert checkpoints_by_thread(pg_uri) == {"t0": 1, "t1": before["t1"]}  # t1 all or nothing


def checkpoints_by_thread(uri: str) -> dict[str, int]:
    with psycopg.connect(uri) as conn:
        found = conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY 1 ORDER BY 1")
        return {str(thread_id): int(n) for thread_id, n in found}
