"""The batch job's integrity findings through the Python API, sync and async twins
alike, on real SQLite and PostgreSQL savers with the application's own serializer
(LangGraph's default, which builds what it can and says nothing of what it cannot)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest

from langgraph_checkpoint_repair.batch import apreview_thread, preview_thread
from tests.support.batch_runs import run_repair
from tests.support.integrity_threads import (
    forget_module,
    nul_graph,
    order_graph,
    shop_module,
    truncate_postgres_head,
    truncate_sqlite_head,
)
from tests.support.seeding import config
from tests.support.stores import Store, open_store

STORED = ["sqlite", "aiosqlite", "postgres", "apostgres"]


@pytest.fixture(params=STORED)
async def stored(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with open_store(request.param, tmp_path, request) as opened:
        yield opened


def is_postgres(store: Store) -> bool:
    return "postgres" in type(store.saver).__module__


async def test_findings_of_every_kind_and_the_run_goes_on(
    stored: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    shop, other = shop_module(tmp_path / "shop"), shop_module(tmp_path / "other")
    await stored.invoke(order_graph(stored.saver, shop), {"note": "new"}, config("lost"))
    await stored.invoke(order_graph(stored.saver, other), {"note": "new"}, config("cut"))
    await stored.invoke(nul_graph(stored.saver, text="ok"), {"text": "new"}, config("fine"))
    if is_postgres(stored):
        with pytest.raises(psycopg.errors.UntranslatableCharacter):
            await stored.invoke(nul_graph(stored.saver), {"text": "new"}, config("nul"))
        truncate_postgres_head(request.getfixturevalue("pg_uri"), "cut", "order")
    else:
        truncate_sqlite_head(tmp_path / "threads.sqlite", "cut")
    forget_module(shop)
    report = await run_repair(stored, dry_run=True)
    by_thread = {t.thread_id: t for t in report.threads}
    assert by_thread["lost"].outcome == "refused_type"
    assert by_thread["lost"].findings == [
        {"code": "lost_type", "channel": "order", "task_id": None,
         "type": f"{shop.__name__}:Order", "error": None}
    ]  # fmt: skip
    assert by_thread["cut"].outcome == "unreadable"
    assert [f["code"] for f in by_thread["cut"].findings or ()] == ["undecodable"]
    assert "fine" not in by_thread and report.errors == []
    expected = {"lost_type": 1, "undecodable": 1}
    if is_postgres(stored):
        assert [f["code"] for f in by_thread["nul"].findings or ()] == ["nul_text"]
        expected["nul_text"] = 1
    assert dict(report.findings) == expected

    shown = (
        await apreview_thread(stored.saver, "cut")
        if stored.is_async
        else preview_thread(stored.saver, "cut")
    )
    assert shown.outcome == "unreadable" and shown.findings[0].code == "undecodable"
