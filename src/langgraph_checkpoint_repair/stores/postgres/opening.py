"""PostgreSQL targets: the server answers and the role may read LangGraph's tables, then a
pool of sessions that each run their settings first (gentle, read-only), sync and async."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from ... import redact
from ..opening_errors import TargetError, needs_extra
from .base import SESSION_TIMEOUTS_SQL


def check_postgres(uri: str, create: bool) -> None:
    """The server answers, LangGraph's tables are there and the role may read them."""
    with needs_extra("postgres"):
        import psycopg

        from . import privileges

    try:
        with psycopg.connect(uri, connect_timeout=10, autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass('checkpoints') IS NOT NULL").fetchone()
            found = bool(row and row[0])
            readable = conn.execute(*privileges.check_query(privileges.LOOK_NEEDS)).fetchall()
    except psycopg.errors.QueryCanceled:
        raise  # connected: a check ran past the role's statement_timeout, said as such
    except psycopg.Error as error:
        raise TargetError(f"cannot connect to PostgreSQL: {redact.one_line(error)}") from None
    if not found and not create:
        raise TargetError("the database has no LangGraph checkpoint tables")
    problem = privileges.problem(readable) if found and not create else None
    if problem is not None:
        raise TargetError(problem)


GENTLE_SETTINGS = (SESSION_TIMEOUTS_SQL,)
READ_ONLY_SETTING = "SET default_transaction_read_only = on"
POOL_TIMEOUT = 5.0
"""Seconds to wait for a pooled connection: past it the database is taken to be gone
(a run stops rather than wait this long for each thread)."""
CONNECT_TIMEOUT = 5
"""Seconds libpq waits for a new connection to answer."""


def _pool_options(pool_size: int) -> dict[str, Any]:
    """The pool settings the sync and async savers share: connections in autocommit
    that give up on a database that no longer answers."""
    from psycopg.rows import dict_row

    connection = {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        "connect_timeout": CONNECT_TIMEOUT,
    }
    return {
        "min_size": 1,
        "max_size": max(pool_size, 1),
        "kwargs": connection,
        "timeout": POOL_TIMEOUT,
        "open": False,
    }


def session_settings(gentle: bool, read_only: bool) -> tuple[str, ...]:
    """What every pooled connection runs first: give up quickly (`gentle`), and for a
    look, refuse any write at the server (`read_only`)."""
    return (*(GENTLE_SETTINGS if gentle else ()), *((READ_ONLY_SETTING,) if read_only else ()))


@contextlib.contextmanager
def postgres_saver(
    uri: str,
    pool_size: int,
    setup: bool,
    settings: tuple[str, ...],
    serde: SerializerProtocol | None,
) -> Iterator[BaseCheckpointSaver[Any]]:
    with needs_extra("postgres"):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg_pool import ConnectionPool

        from .js_saver import js_aware

    check_postgres(uri, setup)

    def configure(conn: Any) -> None:
        for statement in settings:
            conn.execute(statement)

    with ConnectionPool(uri, configure=configure, **_pool_options(pool_size)) as pool:
        saver: PostgresSaver = js_aware(pool, serde)
        if setup:
            saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def apostgres_saver(
    uri: str,
    pool_size: int,
    setup: bool,
    settings: tuple[str, ...],
    serde: SerializerProtocol | None,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    with needs_extra("postgres"):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg_pool import AsyncConnectionPool

        from .js_saver import ajs_aware

    check_postgres(uri, setup)

    async def configure(conn: Any) -> None:
        for statement in settings:
            await conn.execute(statement)

    pool = AsyncConnectionPool(uri, configure=configure, **_pool_options(pool_size))
    async with pool:
        saver: AsyncPostgresSaver = await ajs_aware(pool, serde)
        if setup:
            await saver.setup()
        yield saver
