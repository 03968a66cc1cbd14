"""`langgraph-repair` as operators run it: output, exit codes, bad targets, a killed run."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.cli import main
from langgraph_checkpoint_repair.decisions.plan import RUN_KEY
from tests.support.oracle import assert_valid
from tests.support.seeding import Seeded, brick, config
from tests.support.stores import Store

RUN_KEYS = [
    "run_id",
    "dry_run",
    "threads_scanned",
    "threads_needing_repair",
    "threads_repaired",
    "checkpoints_written",
    "writes_rewritten",
    "skipped",
    "actions",
    "errors",
    "refused_types",
]

MIGRATIONS = [
    "0001_audit_tables.sql",
    "0002_rewritten_writes.sql",
    "0003_dropped_writes.sql",
    "0004_prune_archive.sql",
]


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def last_json(output: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return parsed


def test_scan_lists_broken_threads_and_writes_nothing(target: tuple[str, Seeded]) -> None:
    uri, seeded = target
    code, output = run("scan", uri, "--min-idle", "0", "--json")
    assert code == 0
    report = last_json(output)
    assert list(report)[: len(RUN_KEYS) + 1] == ["threads", *RUN_KEYS]  # written as it goes
    assert report["dry_run"] is True
    assert report["threads_needing_repair"] == len(seeded.broken)
    listed = {t["thread_id"]: t for t in report["threads"]}
    assert set(listed) == set(seeded.broken) | set(seeded.of("in_flight"))
    assert listed[seeded.of("misplaced")[0]]["actions"] == {"messages": ["moved:c1"]}
    again = last_json(run("scan", uri, "--min-idle", "0", "--json")[1])
    assert again["threads_needing_repair"] == len(seeded.broken)


def test_repair_then_undo_through_the_command(target: tuple[str, Seeded]) -> None:
    uri, seeded = target
    code, output = run("repair", uri, "--min-idle", "0", "--json")
    repaired = last_json(output)
    assert code == 0
    through_api = "://" not in uri  # a module:attr factory: the saver's list() is all it has
    assert list(repaired) == RUN_KEYS + (["listed_by_saver"] if through_api else [])
    assert repaired["threads_repaired"] == repaired["checkpoints_written"] == len(seeded.broken)
    assert repaired["skipped"] == {"in_flight": 1}
    assert last_json(run("repair", uri, "--min-idle", "0", "--json")[1])["threads_repaired"] == 0

    code, output = run("undo", uri, "--run", repaired["run_id"], "--json")
    undone = last_json(output)
    assert code == 0
    assert (undone["threads_restored"], undone["threads_skipped"]) == (len(seeded.broken), 0)
    after_undo = last_json(run("scan", uri, "--min-idle", "0", "--json")[1])
    assert after_undo["threads_needing_repair"] == len(seeded.broken)


def test_human_output_has_a_summary_and_no_progress_bar_off_a_terminal(
    target: tuple[str, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    uri, seeded = target
    code, output = run("repair", uri, "--dry-run", "--min-idle", "0")
    assert code == 0
    assert "would_repair" in output
    summary = dict(line.rsplit(None, 1) for line in output.splitlines()[-9:])
    assert summary["threads would repair"] == str(len(seeded.broken))
    assert summary["skipped (in_flight)"] == "1"
    assert summary["checkpoints to write"] == str(len(seeded.broken))
    assert "\r" not in capsys.readouterr().err


def test_policy_and_filters_reach_the_run(target: tuple[str, Seeded]) -> None:
    uri, seeded = target
    bricked = seeded.of("bricked")[0]
    argv = ["repair", uri, "--min-idle", "0", "--json", "--thread", bricked]
    report = last_json(run(*argv, "--policy", "dangling=drop_call")[1])
    assert report["threads_scanned"] == 1
    assert report["actions"] == {"call_dropped": 1}


REDIS_UNREACHABLE = (
    "cannot connect to Redis"
    if importlib.util.find_spec("langgraph.checkpoint.redis")
    else "redis targets need the redis extra"
)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["repair", "sqlite:///{tmp}/missing.sqlite"], "no such SQLite file"),
        (["scan", "sqlite:///{tmp}/not-a-db.sqlite"], "is not a SQLite database"),
        (["scan", "sqlite:///{tmp}/empty.sqlite"], "has no LangGraph checkpoint tables"),
        (["repair", "postgresql://postgres@127.0.0.1:1/nowhere"], "cannot connect to PostgreSQL"),
        (["scan", "mysql://db"], "unknown target"),
        (["scan", "redis://:secret@127.0.0.1:1/0"], REDIS_UNREACHABLE),
        (["scan", "no_such_module_here:saver"], "cannot import"),
        (["scan", "tests.support.memory_target:nothing"], "has no attribute"),
        (["scan", "tests.support.memory_target:SAVER", "--shard", "2/2"], "not a shard"),
        (["scan", "tests.support.memory_target:SAVER", "--min-idle", "soon"], "not a duration"),
        (
            ["repair", "tests.support.memory_target:SAVER", "--policy", "dangling=ignore"],
            "dangling",
        ),
        (["undo", "tests.support.memory_target:SAVER"], "--run"),
        (["explode", "x"], "invalid choice"),
    ],
)
def test_mistakes_get_one_line_exit_2_and_nothing_written(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "not-a-db.sqlite").write_text("hello, I am text")
    sqlite3.connect(tmp_path / "empty.sqlite").close()
    before = sorted(p.name for p in tmp_path.iterdir())
    code, output = run(*(arg.format(tmp=tmp_path) for arg in argv))
    err = capsys.readouterr().err
    assert code == 2
    assert output == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "empty.sqlite").stat().st_size == 0


def test_a_database_without_langgraph_tables_is_refused_untouched(
    pg_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("repair", pg_uri)
    assert code == 2
    assert "no LangGraph checkpoint tables" in capsys.readouterr().err
    with psycopg.connect(pg_uri) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchone()
    assert tables == (0,)


def test_migrate_creates_the_audit_tables_once(postgres_target: tuple[str, Seeded]) -> None:
    uri, _ = postgres_target
    assert last_json(run("migrate", uri, "--json")[1])["applied"] == MIGRATIONS
    assert last_json(run("migrate", uri, "--json")[1])["applied"] == []


def test_migrate_on_sqlite_says_there_is_nothing_to_do(sqlite_target: tuple[str, Seeded]) -> None:
    code, output = run("migrate", sqlite_target[0])
    assert (code, output) == (
        0,
        "nothing to migrate: this store keeps its audit in checkpoint metadata\n",
    )


def repair_checkpoints_per_thread(uri: str) -> dict[str, int]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            f"SELECT thread_id, count(*) FROM checkpoints WHERE metadata ? '{RUN_KEY}' GROUP BY 1"
        ).fetchall()
    return dict(rows)


def written(uri: str) -> int:
    """Repair checkpoints written so far, by any run."""
    return sum(repair_checkpoints_per_thread(uri).values())


async def test_a_killed_run_is_finished_by_the_next_one(pg_uri: str) -> None:
    thread_ids = [f"kill-{n:02}-{uuid.uuid4().hex[:4]}" for n in range(12)]
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        for thread_id in thread_ids:
            await brick(Store(saver, is_async=False), thread_id)
    command = [sys.executable, "-m", "langgraph_checkpoint_repair.cli", "repair", pg_uri]
    slow = [*command, "--min-idle", "0", "--concurrency", "1", "--max-writes-per-second", "4"]
    process = subprocess.Popen(slow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while written(pg_uri) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    first = repair_checkpoints_per_thread(pg_uri)
    assert 3 <= sum(first.values()) < len(thread_ids)

    finish = subprocess.run([*command, "--min-idle", "0", "--json"], capture_output=True, text=True)
    assert finish.returncode == 0
    assert last_json(finish.stdout)["threads_repaired"] == len(thread_ids) - sum(first.values())
    assert repair_checkpoints_per_thread(pg_uri) == {t: 1 for t in thread_ids}
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        for thread_id in thread_ids:
            tup = saver.get_tuple(config(thread_id))
            assert tup is not None
            assert_valid(tup.checkpoint["channel_values"]["messages"])


@pytest.mark.parametrize("command", ["scan", "repair", "undo", "migrate"])
def test_help_shows_an_example_for_each_command(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert f"example:\n  langgraph-repair {command} " in capsys.readouterr().out
