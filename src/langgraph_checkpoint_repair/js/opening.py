"""LangGraph's PostgreSQL savers for a store that LangGraph.js may write to.

Every PostgreSQL target is opened this way: a store holds LangGraph.js threads when
its tables lack `task_path` (LangGraph.js's alone), or beside LangGraph's in one set of
tables, thread by thread; the saver tells them apart by their checkpoints (`rows`).
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from .rows import JS_ONLY_SQL
from .saver import AsyncJsPostgresSaver, JsPostgresSaver
from .values import js_serde


def js_aware(pool: Any, serde: SerializerProtocol | None) -> JsPostgresSaver:
    """A saver over `pool` that reads and writes both formats."""
    with pool.connection() as conn:
        row = conn.execute(JS_ONLY_SQL).fetchone()
    return JsPostgresSaver(pool, serde=js_serde(serde), js_only=_first(row))


async def ajs_aware(pool: Any, serde: SerializerProtocol | None) -> AsyncJsPostgresSaver:
    """The async twin of `js_aware`."""
    async with pool.connection() as conn:
        cursor = await conn.execute(JS_ONLY_SQL)
        row = await cursor.fetchone()
    return AsyncJsPostgresSaver(pool, serde=js_serde(serde), js_only=_first(row))


def _first(row: Any) -> bool:
    """The query's one value, from a tuple or a dict row."""
    if isinstance(row, dict):
        return bool(next(iter(row.values())))
    return bool(row and row[0])
