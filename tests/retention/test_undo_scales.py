"""Undo of a prune does work in proportion to what it puts back: each statement finds a
thread's rows of the run by an index, and the compaction snapshots once, not once per
checkpoint (a deep agent's thread of a thousand checkpoints made that quadratic). The
database's own plans say so; an archive an earlier release made gets its indexes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.stores.postgres import prune_sql as pg
from langgraph_checkpoint_repair.stores.sqlite import prune_sql as lite
from tests.retention.test_prune_delta_threads import talked
from tests.support.pruning import (
    PrunedStore,
    execute,
    prune,
    pruned_store,
    stored_rows,
    undo,
)

OLD_SQLITE_UNPOINT = lite.UNPOINT_SQL.replace(
    "WHERE s.thread_id = ? AND", "WHERE s.thread_id = checkpoints.thread_id AND"
)
"""The statement undo ran before, kept to show that the plan tells the two apart."""
OLD_PG_UNPOINT = """
UPDATE checkpoints c SET parent_checkpoint_id = NULL
WHERE c.thread_id = %s AND c.parent_checkpoint_id IN (
    SELECT s.checkpoint_id FROM checkpoints s
    WHERE s.thread_id = c.thread_id AND s.checkpoint_ns = c.checkpoint_ns
    AND {snapshot})"""


def sqlite_plan(store: PrunedStore, query: str, params: Any) -> str:
    rows = execute(store.reader, f"EXPLAIN QUERY PLAN {query}", params)
    return "\n".join(str(row[-1]) for row in rows)


def pg_plan(store: PrunedStore, query: str, params: Any) -> str:
    [(plan,)] = execute(store.reader, f"EXPLAIN (FORMAT JSON) {query}", params)
    return json.dumps(plan)


async def test_undo_finds_the_snapshots_once_and_the_archive_by_an_index(
    store: PrunedStore,
) -> None:
    await talked(store, "long", 7)
    report = await prune(store, compact=True)
    assert report.threads_compacted == 1
    params = ("long", "long", report.run_id)
    if isinstance(store.reader, PostgresSaver):
        old = OLD_PG_UNPOINT.format(snapshot=pg.SNAPSHOT_OF_RUN)
        assert "SubPlan" in pg_plan(store, old, ("long", report.run_id))
        assert "SubPlan" not in pg_plan(store, pg.UNPOINT_SQL, params)
    else:
        assert "CORRELATED" in sqlite_plan(store, OLD_SQLITE_UNPOINT, ("long", report.run_id))
        assert "CORRELATED" not in sqlite_plan(store, lite.UNPOINT_SQL, params)
        for archive in lite.ARCHIVES:
            found = sqlite_plan(
                store, f"SELECT * FROM {archive} WHERE run_id = ? AND thread_id = ?", ("r", "t")
            )
            assert f"USING INDEX {archive}_run" in found, found


@pytest.mark.parametrize("kind", ["sqlite", "aiosqlite"])
async def test_an_archive_without_its_indexes_is_undone_and_given_them(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """PostgreSQL's archive has had its indexes since the migration that made it."""
    async with pruned_store(kind, tmp_path, request) as store:
        await undone_without_indexes(store)


async def undone_without_indexes(store: PrunedStore) -> None:
    await talked(store, "old", 7)
    before = stored_rows(store.reader)
    report = await prune(store, compact=True)
    for archive in lite.ARCHIVES:
        execute(store.reader, f"DROP INDEX {archive}_run")

    await undo(store, report.run_id)

    assert stored_rows(store.reader) == before
    indexes = execute(store.reader, "SELECT name FROM sqlite_master WHERE type = 'index'")
    assert {f"{archive}_run" for archive in lite.ARCHIVES} <= {row[0] for row in indexes}
