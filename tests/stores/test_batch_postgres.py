"""The PostgreSQL fast path: paging, the first look at blobs (default and encrypted
serde alike), shards, the audit tables and their migrations."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.stores import Selection, store_for
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from tests.support.batch_runs import run_repair
from tests.support.postgres_threads import encrypted, postgres
from tests.support.seeding import brick, seed

ALL_TABLES = [
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "checkpoint_migrations",
    "langgraph_repair_threads",
    "langgraph_repair_rewrites",
    "langgraph_repair_runs",
    "langgraph_repair_migrations",
]
COLUMNS_SQL = """
SELECT table_name, column_name, data_type FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name LIKE 'checkpoint%'
ORDER BY 1, 2"""
RUNS_SQL = """
SELECT run_id, command, arguments, finished_at IS NOT NULL, summary FROM langgraph_repair_runs"""
THREADS_SQL = """
SELECT thread_id, checkpoint_ns, source_checkpoint_id, repair_checkpoint_id, actions
FROM langgraph_repair_threads"""


def rows(uri: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute(query).fetchall()


@pytest.mark.parametrize("serde", ["default", "encrypted"])
async def test_first_look_marks_exactly_the_threads_to_load(pg_uri: str, serde: str) -> None:
    with postgres(pg_uri, encrypted() if serde == "encrypted" else None) as store:
        seeded = await seed(store)
        pg = store_for(store.saver)
        assert isinstance(pg, PostgresStore)
        heads = [h for page in pg.pages(Selection(page_size=3)) for h in page]
    assert len(heads) == len({(h.thread_id, h.checkpoint_ns) for h in heads}) == 7
    looked_at = {h.thread_id for h in heads if h.maybe_broken}
    assert looked_at == set(seeded.broken) | set(seeded.of("in_flight"))


async def test_encrypted_and_default_serde_give_identical_reports(pg_uri: str) -> None:
    reports = []
    for serde in (None, encrypted()):
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {', '.join(ALL_TABLES)}")
        with postgres(pg_uri, serde) as store:
            await seed(store)
            report = await run_repair(store)
            reports.append(
                (
                    report.to_json() | {"run_id": None},
                    sorted((t.thread_id, t.outcome, str(t.actions)) for t in report.threads),
                )
            )
    assert reports[0] == reports[1]


async def test_paging_and_shards_cover_every_thread_exactly_once(pg_uri: str) -> None:
    with postgres(pg_uri) as store:
        for n in range(12):
            await brick(store, f"thread-{n:02}")
        everyone = {f"thread-{n:02}" for n in range(12)}
        covered: list[str] = []
        for k in range(3):
            report = await run_repair(store, dry_run=True, shard=(k, 3), page_size=2)
            covered += [t.thread_id for t in report.threads]
    assert sorted(covered) == sorted(everyone)  # each thread in exactly one shard


async def test_audit_tables_record_the_run_and_each_thread(pg_uri: str) -> None:
    with postgres(pg_uri) as store:
        seeded = await seed(store, bricked=1)
        report = await run_repair(store)
    runs = rows(pg_uri, RUNS_SQL)
    assert len(runs) == 1
    run_id, command, arguments, finished, summary = runs[0]
    assert (run_id, command, finished) == (report.run_id, "repair", True)
    assert arguments["dry_run"] is False and arguments["channels"] == ["messages"]
    assert summary["threads_repaired"] == report.threads_repaired == len(seeded.broken)
    threads = rows(pg_uri, THREADS_SQL)
    assert sorted(t[0] for t in threads) == sorted(seeded.broken)
    by_thread = {t.thread_id: t for t in report.threads}
    for thread_id, ns, source, repair, actions in threads:
        assert ns == by_thread[thread_id].checkpoint_ns
        assert (source, repair) == (
            by_thread[thread_id].checkpoint_id,
            by_thread[thread_id].repair_checkpoint_id,
        )
        parent = rows(
            pg_uri, f"SELECT parent_checkpoint_id FROM checkpoints WHERE checkpoint_id = '{repair}'"
        )
        assert parent == [(source,)]
        assert actions["messages"][0]["kind"] in ("placeholder", "moved", "orphan_dropped")


def columns(uri: str) -> list[tuple[Any, ...]]:
    return rows(uri, COLUMNS_SQL)


async def test_migrations_are_idempotent_and_leave_langgraph_tables_alone(pg_uri: str) -> None:
    with postgres(pg_uri) as store:
        before = columns(pg_uri)
        pg = store_for(store.saver)
        assert isinstance(pg, PostgresStore)
        assert pg.migrate() == [
            "0001_audit_tables.sql",
            "0002_rewritten_writes.sql",
            "0003_dropped_writes.sql",
            "0004_prune_archive.sql",
        ]
        assert pg.migrate() == []
        repair_threads(store.saver, dry_run=True)
    assert columns(pg_uri) == before
    assert rows(pg_uri, "SELECT version, name FROM langgraph_repair_migrations") == [
        (1, "0001_audit_tables.sql"),
        (2, "0002_rewritten_writes.sql"),
        (3, "0003_dropped_writes.sql"),
        (4, "0004_prune_archive.sql"),
    ]


async def test_the_first_look_sends_heads_that_may_hold_findings_to_the_full_load(
    pg_uri: str, tmp_path: Any
) -> None:
    """A clean history whose message holds an application's type (also from a module
    whose name starts as a safe standard module's does: `reports_...`, not `re`), a head
    whose other channel holds one, a pending write of text holding U+0000: each is
    loaded in full (where the findings are made); a clean head of LangGraph's own types
    is not."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.base import empty_checkpoint

    from tests.support.integrity_threads import brick_with_nul, order_graph, shop_module

    shop = shop_module(tmp_path / "shop")
    reports = shop_module(tmp_path / "reports", prefix="reports")
    extras = {
        "clean": {},
        "in-message": {"size": shop.Size.LARGE},
        "near-a-safe-name": {"size": reports.Size.LARGE},
    }
    with postgres(pg_uri) as store:
        saver = store.saver
        for thread_id, extra in extras.items():
            checkpoint = empty_checkpoint()
            history = [HumanMessage("hi"), AIMessage("yo", additional_kwargs=extra)]
            checkpoint["channel_values"] = {"messages": history}
            checkpoint["channel_versions"] = {"messages": saver.get_next_version(None, None)}
            metadata: Any = {"source": "loop", "step": 1, "parents": {}}
            thread: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            saver.put(thread, checkpoint, metadata, dict(checkpoint["channel_versions"]))
        order_graph(saver, shop).invoke({"note": "new"}, {"configurable": {"thread_id": "other"}})
        brick_with_nul(saver, "nul")
        pg = store_for(saver)
        assert isinstance(pg, PostgresStore)
        heads = [h for page in pg.pages(Selection(page_size=2)) for h in page]
    assert {h.thread_id: h.maybe_broken for h in heads} == {
        "clean": False,
        "in-message": True,
        "near-a-safe-name": True,
        "other": True,
        "nul": True,
    }
