"""TARGET strings -> open checkpoint savers, sync and async.

    postgresql://user@host/db   PostgresSaver / AsyncPostgresSaver (a pool)
    sqlite:///path/to/file      SqliteSaver / AsyncSqliteSaver, taught LangGraph.js's threads
    redis://host:port/db        RedisSaver / AsyncRedisSaver, loading every write
    package.module:attr         a saver, or a callable (plain or `async def`)
                                returning a saver or a (async) context
                                manager yielding one

A store opened from a URL uses the serializer given (the command line gives a
`strict.StrictSerializer`), else LangGraph's default, as the application's own
saver does (the Agent Server drop-in). A saver from `module:attr` keeps the
serializer its owner gave it.

Opening checks what it can before anything is written: the server answers,
the file exists and is a SQLite database, LangGraph's tables are there, the
optional extra is installed, the factory imports and runs. Every failure is a
`TargetError` with a one-line message. `open_saver` refuses an async factory
(`AsyncFactory`) before calling it, so the caller can use `aopen_saver`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..js.values import js_serde
from ..stores.sqlite.files import (
    FileTables,
    Mode,
    SqliteFileError,
    aready_saver,
    file_uri,
    read_tables,
    ready_saver,
    shown,
)
from .errors import TargetError, needs_extra
from .factories import afactory_saver, factory_saver
from .parse import parse_target


@contextlib.contextmanager
def open_saver(
    text: str,
    *,
    pool_size: int = 1,
    setup: bool = False,
    gentle: bool = False,
    read_only: bool = False,
    serde: SerializerProtocol | None = None,
) -> Iterator[BaseCheckpointSaver[Any]]:
    """A sync saver for TARGET. With `setup`, missing LangGraph tables are created;
    without it they must already exist. With `gentle`, PostgreSQL statements give up
    after a short lock wait or run time instead of queueing behind live traffic.
    With `read_only` (a look), nothing can change the store: a SQLite file is opened
    read-only, PostgreSQL sessions refuse writes. `serde` is the serializer of a saver
    opened from a URL (default: LangGraph's)."""
    target = parse_target(text)
    if target.kind == "postgres":
        from ..stores.postgres.opening import postgres_saver, session_settings

        settings = session_settings(gentle, read_only)
        with postgres_saver(target.location, pool_size, setup, settings, serde) as saver:
            yield saver
    elif target.kind == "sqlite":
        with needs_extra("sqlite"):
            from ..stores.sqlite.js_saver import JsSqliteSaver

        tables = _check_sqlite(target.location, setup)
        uri = file_uri(target.location, _sqlite_mode(read_only, setup))
        conn = _sqlite_connect(target.location, uri)
        try:
            saver = JsSqliteSaver(conn, serde=js_serde(serde))
            if setup or tables is None:
                saver.setup()  # LangGraph's own, as the application's saver runs it
            else:
                ready_saver(saver, tables)
            yield saver
        finally:
            conn.close()
    elif target.kind == "redis":
        with needs_extra("redis"):
            from ..stores.redis.opening import redis_saver

        with redis_saver(target.location, setup) as rsaver:
            yield rsaver
    else:
        with factory_saver(target.location) as saver:
            yield saver


@contextlib.asynccontextmanager
async def aopen_saver(
    text: str,
    *,
    pool_size: int = 1,
    setup: bool = False,
    read_only: bool = False,
    serde: SerializerProtocol | None = None,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The async twin of `open_saver`: AsyncPostgresSaver, AsyncSqliteSaver, or the factory's."""
    target = parse_target(text)
    if target.kind == "postgres":
        from ..stores.postgres.opening import apostgres_saver, session_settings

        settings = session_settings(False, read_only)
        async with apostgres_saver(target.location, pool_size, setup, settings, serde) as saver:
            yield saver
    elif target.kind == "sqlite":
        with needs_extra("sqlite"):
            import aiosqlite

            from ..stores.sqlite.js_saver import AsyncJsSqliteSaver

        tables = _check_sqlite(target.location, setup)
        uri = file_uri(target.location, _sqlite_mode(read_only, setup))
        _sqlite_connect(target.location, uri).close()  # a one-line error before aiosqlite's
        async with aiosqlite.connect(uri, uri=True) as conn:
            asaver = AsyncJsSqliteSaver(conn, serde=js_serde(serde))
            if setup or tables is None:
                await asaver.setup()
            else:
                await aready_saver(asaver, tables)
            yield asaver
    elif target.kind == "redis":
        with needs_extra("redis"):
            from ..stores.redis.opening import aredis_saver

        async with aredis_saver(target.location, setup) as rsaver:
            yield rsaver
    else:
        async with afactory_saver(target.location) as saver:
            yield saver


def _sqlite_mode(read_only: bool, setup: bool) -> Mode:
    if read_only and setup:
        raise ValueError("a read-only saver cannot set up its tables")
    return "ro" if read_only else "rwc" if setup else "rw"


def _sqlite_connect(path: str, uri: str) -> sqlite3.Connection:
    try:
        return sqlite3.connect(uri, uri=True, check_same_thread=False)
    except sqlite3.Error as error:
        raise TargetError(f"cannot open SQLite file {shown(path)}: {error}") from None


def _check_sqlite(path: str, create: bool) -> FileTables | None:
    try:
        return read_tables(path, create)
    except SqliteFileError as error:
        raise TargetError(str(error)) from None
    except OSError as error:
        raise TargetError(
            f"cannot open SQLite file {shown(path)}: {error.strerror or error}"
        ) from None
