"""SQLite files on disk: looking changes nothing, a path is a path, every thread id counts."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import arepair_threads, repair_threads
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.cli_runs import last_json, run_cli
from tests.support.histories import ai, human
from tests.support.seeding import put_in_namespace
from tests.support.stores import Store

BROKEN = [human("a"), ai("a1", "c1"), human("b")]


async def broken_store(path: Path, thread_id: str = "broken", journal: str = "delete") -> str:
    """A LangGraph SQLite file holding one broken thread, left in `journal` mode."""
    with SqliteSaver.from_conn_string(str(path)) as saver:
        await put_in_namespace(Store(saver, is_async=False), thread_id, "", BROKEN)
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
    return f"sqlite:///{path}"


@dataclass(frozen=True)
class FileState:
    """Everything a look could change: bytes, mtime, journal mode, the folder's files."""

    data: bytes
    mtime_ns: int
    journal_mode: str
    folder: tuple[str, ...]

    @classmethod
    def of(cls, path: Path) -> FileState:
        stat = path.stat()
        with open(path, "rb") as file:
            data = file.read()
        header_mode = "wal" if data[18:20] == b"\x02\x02" else "rollback"
        return cls(data, stat.st_mtime_ns, header_mode, tuple(sorted(os.listdir(path.parent))))


def journal_mode(path: Path) -> str:
    with sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


LOOKS = [
    ["scan"],
    ["scan", "--list"],
    ["scan", "--json"],
    ["show", "--thread", "broken"],
    ["repair", "--dry-run", "--min-idle", "0s"],
]


@pytest.mark.parametrize("look", LOOKS, ids=" ".join)
async def test_a_look_at_a_rollback_journal_file_changes_nothing(
    tmp_path: Path, look: list[str]
) -> None:
    path = tmp_path / "threads.sqlite"
    target = await broken_store(path)
    before = FileState.of(path)
    result = run_cli(look[0], target, *look[1:])
    assert result.returncode == 0, result.stderr
    assert "broken" in result.stdout
    assert FileState.of(path) == before
    assert journal_mode(path) == "delete"


async def test_an_async_look_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    target = await broken_store(path)
    before = FileState.of(path)
    async with aopen_saver(target, read_only=True) as saver:
        report = await arepair_threads(saver, dry_run=True, min_idle=0)
    assert report.threads_needing_repair == 1
    assert FileState.of(path) == before


async def test_a_read_only_saver_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    target = await broken_store(path)
    before = FileState.of(path)
    with open_saver(target, read_only=True) as saver:
        report = repair_threads(saver, min_idle=0)
    assert report.threads_repaired == 0
    assert "readonly database" in str(report.errors)
    assert FileState.of(path) == before


async def without_writes_table(path: Path) -> str:
    target = await broken_store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE writes")
    return target


@pytest.mark.parametrize("look", LOOKS, ids=" ".join)
async def test_a_file_without_writes_can_be_looked_at_untouched(
    tmp_path: Path, look: list[str]
) -> None:
    path = tmp_path / "threads.sqlite"
    target = await without_writes_table(path)
    before = FileState.of(path)
    result = run_cli(look[0], target, *look[1:])
    assert result.returncode == 0, result.stderr
    assert "broken" in result.stdout
    assert FileState.of(path) == before


def table_names(path: Path) -> set[str]:
    with sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}


async def test_repair_of_a_file_without_writes_adds_checkpoints_only(tmp_path: Path) -> None:
    """Repair writes checkpoint rows and nothing else: no table, no journal mode switch."""
    path = tmp_path / "threads.sqlite"
    target = await without_writes_table(path)
    tables = table_names(path)
    repaired = run_cli("repair", target, "--min-idle", "0s", "--json")
    assert repaired.returncode == 0, repaired.stderr
    assert last_json(repaired.stdout)["threads_repaired"] == 1
    assert table_names(path) == tables
    assert journal_mode(path) == "delete"
    again = run_cli("scan", target, "--json")
    assert last_json(again.stdout)["threads_needing_repair"] == 0


OLD_WRITES = """CREATE TABLE writes (
    thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))"""


@pytest.mark.parametrize("look", LOOKS, ids=" ".join)
async def test_a_file_from_before_task_path_is_looked_at_unaltered(
    tmp_path: Path, look: list[str]
) -> None:
    """LangGraph's setup would add the `task_path` column: a look never alters a table."""
    path = tmp_path / "threads.sqlite"
    target = await without_writes_table(path)
    with sqlite3.connect(path) as conn:
        conn.execute(OLD_WRITES)
    before = FileState.of(path)
    result = run_cli(look[0], target, *look[1:])
    assert result.returncode == 0, result.stderr
    assert "broken" in result.stdout
    assert FileState.of(path) == before


ODD_NAMES = ["a#b.sqlite", "a?mode=memory.sqlite", "100% sure.sqlite", "with space.sqlite"]
ODD_NAMES += ["nämé-日本.sqlite", "%23encoded.sqlite"]


@pytest.mark.parametrize("name", ODD_NAMES)
async def test_a_path_is_a_path_for_scan_and_repair(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "odd #?% dir"
    folder.mkdir()
    path = folder / name
    target = await broken_store(path)
    scanned = run_cli("scan", target, "--json")
    assert scanned.returncode == 0, scanned.stderr
    assert last_json(scanned.stdout)["threads_needing_repair"] == 1
    repaired = run_cli("repair", target, "--min-idle", "0s", "--json")
    assert repaired.returncode == 0, repaired.stderr
    assert last_json(repaired.stdout)["threads_repaired"] == 1
    assert sorted(os.listdir(folder)) == [name]  # no other file was opened or created


async def test_a_look_at_a_wal_file_changes_no_byte_of_it(tmp_path: Path) -> None:
    """LangGraph's own mode: the database's bytes stay as they were. A reader of a WAL file
    needs its -wal and -shm files; SQLite makes them when no one has the file open: the
    log stays empty (the -shm holds only SQLite's index of it)."""
    path = tmp_path / "threads.sqlite"
    target = await broken_store(path, journal="wal")
    before = FileState.of(path)
    for look in LOOKS:
        result = run_cli(look[0], target, *look[1:])
        assert result.returncode == 0, result.stderr
    after = FileState.of(path)
    assert (after.data, after.mtime_ns, after.journal_mode) == (
        before.data,
        before.mtime_ns,
        before.journal_mode,
    )
    assert set(after.folder) - set(before.folder) <= {f"{path.name}-wal", f"{path.name}-shm"}
    wal = path.with_name(f"{path.name}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
