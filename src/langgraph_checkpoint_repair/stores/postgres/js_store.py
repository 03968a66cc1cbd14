"""The PostgreSQL fast path over a store LangGraph.js writes to (alone, or beside LangGraph).

Heads, shards, claims, the audit and the races are the PostgreSQL store's own; a repair
or undo is put through the LangGraph.js-aware saver bound to the claiming transaction,
which writes it in the format of the thread it lands on (`js_saver`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from psycopg import AsyncConnection, Connection

from ...decisions.plan import NewCheckpoint
from ..base import aput_new, put_new
from .aio import AsyncPostgresStore
from .sync import PostgresStore


class JsPostgresStore(PostgresStore):
    """`PostgresStore` over a `js.JsPostgresSaver`."""

    def _putting(self, new: NewCheckpoint) -> Callable[[Connection[Any]], None]:
        saver: Any = self.saver

        def put(conn: Connection[Any]) -> None:
            bound = saver.bound_to(conn)
            put_new(bound, new)

        return put


class AsyncJsPostgresStore(AsyncPostgresStore):
    """`AsyncPostgresStore` over a `js.AsyncJsPostgresSaver`."""

    def _putting(self, new: NewCheckpoint) -> Callable[[AsyncConnection[Any]], Awaitable[None]]:
        saver: Any = self.saver

        async def put(conn: AsyncConnection[Any]) -> None:
            bound = saver.bound_to(conn)
            await aput_new(bound, new)

        return put
