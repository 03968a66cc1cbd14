"""`langgraph-repair repair --rewind-unreadable` as operators run it
(`docs/how-to/unreadable-threads.md`): real
chat graphs on real SQLite and PostgreSQL stores, heads cut short with SQL, the real
command in a child process, the plain saver reading the result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import chat_graph
from tests.support.cli_runs import last_json, run_cli
from tests.support.rewind_threads import (
    all_rows,
    chat_turns,
    checkpoint_ids,
    cut,
    cut_all,
    sqlite_path,
)
from tests.support.seeding import config
from tests.support.stores import Store, open_store

KINDS = ["sqlite", "postgres"]
Opened = tuple[str, str, str, Store]


@pytest.fixture(params=KINDS)
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opened]:
    """A store's kind, where SQL reaches it, its TARGET, and the application's saver."""
    kind = request.param
    async with open_store(kind, tmp_path, request) as store:
        if kind == "sqlite":
            where = sqlite_path(tmp_path)
            yield kind, where, f"sqlite:///{where}", store
        else:
            where = request.getfixturevalue("pg_uri")
            yield kind, where, where, store


async def cut_threads(kind: str, where: str, store: Store) -> list[str]:
    """`one` with its head cut, `two` with its head and parent; `two`'s ids, newest first."""
    for thread_id, back in (("one", (0,)), ("two", (0, 1))):
        await chat_turns(store, thread_id)
        ids = checkpoint_ids(kind, where, thread_id)
        cut(kind, where, thread_id, *back)
    await chat_turns(store, "healthy", turns=1)
    return ids


def repair(target: str, *more: str) -> dict[str, Any]:
    done = run_cli("repair", target, "--min-idle", "0", "--json", *more)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def test_scan_refuses_the_flag_in_one_line() -> None:
    done = run_cli("scan", "sqlite:///nowhere.sqlite", "--rewind-unreadable")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--rewind-unreadable" in done.stderr


async def test_rewind_from_the_command_line_then_undo(opened: Opened) -> None:
    kind, where, target, store = opened
    two = await cut_threads(kind, where, store)
    before = all_rows(kind, where)

    plain = repair(target)
    assert plain["skipped"] == {"unreadable": 2} and plain["actions"] == {}
    assert "checkpoints_passed_over" not in plain
    assert all_rows(kind, where) == before

    looked = run_cli("repair", target, "--min-idle", "0", "--dry-run", "--rewind-unreadable")
    assert looked.returncode == 0, looked.stderr
    assert f"rewound:to {two[2]}, passing over 2" in " ".join(looked.stdout.split())
    assert "checkpoints passed over" in looked.stdout
    assert all_rows(kind, where) == before

    report = repair(target, "--rewind-unreadable")
    assert report["actions"] == {"rewound": 2} and report["checkpoints_passed_over"] == 3
    assert report["threads_repaired"] == 2 and report["errors"] == []
    graph = chat_graph(store.saver)
    rewound = await store.get_state(graph, config("two"))
    ancestor = {"configurable": {**config("two")["configurable"], "checkpoint_id": two[2]}}
    assert rewound.values == (await store.get_state(graph, ancestor)).values
    assert repair(target, "--rewind-unreadable")["actions"] == {}

    undone = run_cli("undo", target, "--run", report["run_id"], "--json")
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["threads_restored"] == 2
    with pytest.raises(Exception):  # noqa: B017  # the saver's own decode error
        await store.get_tuple(store.saver, config("two"))


async def test_a_thread_without_a_readable_ancestor_is_listed_with_why(opened: Opened) -> None:
    kind, where, target, store = opened
    await chat_turns(store, "short", turns=1)
    cut_all(kind, where, "short")
    before = all_rows(kind, where)
    done = run_cli("repair", target, "--min-idle", "0", "--rewind-unreadable")
    assert done.returncode == 0, done.stderr
    assert "not rewound: no_readable_ancestor" in " ".join(done.stdout.split())
    assert all_rows(kind, where) == before
