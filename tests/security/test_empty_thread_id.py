"""The empty string is a thread id like any other: found, repaired and undone on every store."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.batch_runs import head_messages, run_repair, run_undo
from tests.support.cli_runs import last_json, run_cli
from tests.support.histories import ai, human
from tests.support.seeding import put_in_namespace
from tests.support.stores import Store

BROKEN = [human("a"), ai("a1", "c1"), human("b")]


async def test_the_empty_thread_id_is_repaired_and_undone(store: Store) -> None:
    await put_in_namespace(store, "", "", BROKEN)
    await put_in_namespace(store, "other", "", BROKEN)
    report = await run_repair(store)
    assert sorted(t.thread_id for t in report.threads) == ["", "other"]
    assert report.threads_repaired == 2
    assert await head_messages(store, "") != BROKEN
    assert (await run_repair(store, dry_run=True)).threads_needing_repair == 0
    undone = await run_undo(store, report.run_id)
    assert undone.threads_restored == 2


async def test_the_command_repairs_the_empty_thread_id_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        await put_in_namespace(Store(saver, is_async=False), "", "", BROKEN)
    await _repaired_by_the_command(f"sqlite:///{path}")


async def test_the_command_repairs_the_empty_thread_id_on_postgres(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        await put_in_namespace(Store(saver, is_async=False), "", "", BROKEN)
    await _repaired_by_the_command(pg_uri)


async def _repaired_by_the_command(target: str) -> None:
    listed = run_cli("scan", target, "--list")
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 1
    repaired = run_cli("repair", target, "--min-idle", "0s", "--json")
    assert repaired.returncode == 0, repaired.stderr
    assert last_json(repaired.stdout)["threads_repaired"] == 1
    assert last_json(run_cli("scan", target, "--json").stdout)["threads_needing_repair"] == 0
