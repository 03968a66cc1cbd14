"""TARGET strings -> open checkpoint savers, sync and async.

    postgresql://user@host/db   PostgresSaver / AsyncPostgresSaver (a pool)
    sqlite:///path/to/file      SqliteSaver / AsyncSqliteSaver
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
import importlib
import inspect
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from . import redact
from .sqlite_files import (
    FileTables,
    Mode,
    SqliteFileError,
    aready_saver,
    file_uri,
    read_tables,
    ready_saver,
    shown,
)


class TargetError(Exception):
    """A TARGET that cannot be opened; the message is one line meant for a person."""


class AsyncFactory(TargetError):
    """A `module:attr` factory that must be awaited or entered with `async with`:
    `open_saver` refuses it before calling anything; `aopen_saver` opens it."""


SYNC_API = ("get_tuple", "list", "put")
ASYNC_API = ("aget_tuple", "alist", "aput")


@dataclass(frozen=True)
class Target:
    kind: Literal["postgres", "sqlite", "factory"]
    location: str


POSTGRES_SCHEMES = ("postgresql", "postgres")
TARGET_ENV = "LANGGRAPH_REPAIR_TARGET"


def parse_target(text: str) -> Target:
    """Tell which kind of store a TARGET names, without opening it. Schemes match in
    any case; the passwords a TARGET carries are noted, to be scrubbed from any output."""
    redact.remember(text)
    scheme, separator, rest = text.partition("://")
    scheme = scheme.lower() if separator else ""
    if scheme in POSTGRES_SCHEMES:
        return Target("postgres", f"{scheme}://{rest}")
    base, plus, driver = scheme.partition("+")
    if plus and base in POSTGRES_SCHEMES:  # SQLAlchemy's grammar is not libpq's: say so
        raise TargetError(
            f"{redact.scrub(text)!r} is a SQLAlchemy URL: write it as {base}://... "
            f"(libpq's form, without '+{driver}')"
        )
    if scheme == "sqlite" and rest.startswith("/"):
        path = rest[1:]
        if not path:
            raise TargetError("sqlite:/// needs a file path, e.g. sqlite:///threads.sqlite")
        return Target("sqlite", path)
    module, _, attr = text.partition(":")
    if "://" not in text and module and attr.isidentifier():
        if "/" in module or "\\" in module or module.endswith(".py"):
            raise TargetError(
                f"{module!r} is a file path: name the module as Python imports it "
                "(e.g. my_app.savers:make_saver), with its folder on PYTHONPATH"
            )
        return Target("factory", text)
    raise TargetError(
        f"unknown target {redact.scrub(text)!r}: use postgresql://..., sqlite:///path "
        "or module:attr"
    )


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
        settings = _session_settings(gentle, read_only)
        with _postgres_saver(target.location, pool_size, setup, settings, serde) as saver:
            yield saver
    elif target.kind == "sqlite":
        with _needs_extra("sqlite"):
            from langgraph.checkpoint.sqlite import SqliteSaver

        tables = _check_sqlite(target.location, setup)
        uri = file_uri(target.location, _sqlite_mode(read_only, setup))
        conn = _sqlite_connect(target.location, uri)
        try:
            saver = SqliteSaver(conn, serde=serde)
            if setup or tables is None:
                saver.setup()  # LangGraph's own, as the application's saver runs it
            else:
                ready_saver(saver, tables)
            yield saver
        finally:
            conn.close()
    else:
        with _factory_saver(target.location) as saver:
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
        settings = _session_settings(False, read_only)
        async with _apostgres_saver(target.location, pool_size, setup, settings, serde) as saver:
            yield saver
    elif target.kind == "sqlite":
        with _needs_extra("sqlite"):
            import aiosqlite
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        tables = _check_sqlite(target.location, setup)
        uri = file_uri(target.location, _sqlite_mode(read_only, setup))
        _sqlite_connect(target.location, uri).close()  # a one-line error before aiosqlite's
        async with aiosqlite.connect(uri, uri=True) as conn:
            asaver = AsyncSqliteSaver(conn, serde=serde)
            if setup or tables is None:
                await asaver.setup()
            else:
                await aready_saver(asaver, tables)
            yield asaver
    else:
        async with _afactory_saver(target.location) as saver:
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


@contextlib.contextmanager
def _needs_extra(extra: str) -> Iterator[None]:
    """Turn a missing optional dependency into a one-line hint (wraps imports only)."""
    try:
        yield
    except ImportError as error:
        raise TargetError(
            f"{extra} targets need the {extra} extra: "
            f"pip install 'langgraph-checkpoint-repair[{extra}]' ({error})"
        ) from None


def _check_sqlite(path: str, create: bool) -> FileTables | None:
    try:
        return read_tables(path, create)
    except SqliteFileError as error:
        raise TargetError(str(error)) from None
    except OSError as error:
        raise TargetError(
            f"cannot open SQLite file {shown(path)}: {error.strerror or error}"
        ) from None


def _check_postgres(uri: str, create: bool) -> None:
    """The server answers, LangGraph's tables are there and the role may read them."""
    with _needs_extra("postgres"):
        import psycopg

        from .stores.postgres import privileges

    try:
        with psycopg.connect(uri, connect_timeout=10, autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass('checkpoints') IS NOT NULL").fetchone()
            found = bool(row and row[0])
            readable = conn.execute(*privileges.check_query(privileges.LOOK_NEEDS)).fetchall()
    except psycopg.Error as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise TargetError(f"cannot connect to PostgreSQL: {redact.scrub(first_line)}") from None
    if not found and not create:
        raise TargetError("the database has no LangGraph checkpoint tables")
    problem = privileges.problem(readable) if found and not create else None
    if problem is not None:
        raise TargetError(problem)


GENTLE_SETTINGS = ("SET lock_timeout = '2s'", "SET statement_timeout = '60s'")
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


def _session_settings(gentle: bool, read_only: bool) -> tuple[str, ...]:
    """What every pooled connection runs first: give up quickly (`gentle`), and for a
    look, refuse any write at the server (`read_only`)."""
    return (*(GENTLE_SETTINGS if gentle else ()), *((READ_ONLY_SETTING,) if read_only else ()))


@contextlib.contextmanager
def _postgres_saver(
    uri: str,
    pool_size: int,
    setup: bool,
    settings: tuple[str, ...],
    serde: SerializerProtocol | None,
) -> Iterator[BaseCheckpointSaver[Any]]:
    with _needs_extra("postgres"):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg_pool import ConnectionPool

    _check_postgres(uri, setup)

    def configure(conn: Any) -> None:
        for statement in settings:
            conn.execute(statement)

    with ConnectionPool(uri, configure=configure, **_pool_options(pool_size)) as pool:
        saver = PostgresSaver(pool, serde=serde)
        if setup:
            saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _apostgres_saver(
    uri: str,
    pool_size: int,
    setup: bool,
    settings: tuple[str, ...],
    serde: SerializerProtocol | None,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    with _needs_extra("postgres"):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg_pool import AsyncConnectionPool

    _check_postgres(uri, setup)

    async def configure(conn: Any) -> None:
        for statement in settings:
            await conn.execute(statement)

    pool = AsyncConnectionPool(uri, configure=configure, **_pool_options(pool_size))
    async with pool:
        saver = AsyncPostgresSaver(pool, serde=serde)
        if setup:
            await saver.setup()
        yield saver


def _load_attr(spec: str) -> Any:
    """The object `module:attr` names; any failure of the import is one line."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as error:  # the module's own code failed, or exited
        raise TargetError(f"cannot import {module_name!r}: {_one_line(error)}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise TargetError(f"{module_name!r} has no attribute {attr!r}") from None


def _is_async_factory(found: Any) -> bool:
    """An `async def` factory, or an `@asynccontextmanager` one (known without calling)."""
    wrapped = getattr(found, "__wrapped__", None)
    return inspect.iscoroutinefunction(found) or inspect.isasyncgenfunction(wrapped)


def _made(spec: str, found: Any) -> Any:
    """A saver as is; a callable is called with no arguments (a failure is one line)."""
    if not callable(found) or isinstance(found, BaseCheckpointSaver):
        return found
    try:
        return found()
    except (Exception, SystemExit) as error:  # a factory that exits is no saver either
        raise TargetError(f"calling {spec}() failed: {_one_line(error)}") from None


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


@contextlib.contextmanager
def _factory_saver(spec: str) -> Iterator[BaseCheckpointSaver[Any]]:
    found = _load_attr(spec)
    if _is_async_factory(found):
        raise AsyncFactory(f"{spec} is an async factory: open it with aopen_saver")
    made = _made(spec, found)
    if isinstance(made, contextlib.AbstractContextManager):
        with made as saver:
            yield _checked(spec, _entered(made, saver))
    elif isinstance(made, contextlib.AbstractAsyncContextManager):
        raise AsyncFactory(f"{spec} gives an async context manager: open it with aopen_saver")
    else:
        yield _checked(spec, made)


@contextlib.asynccontextmanager
async def _afactory_saver(spec: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    made = _made(spec, _load_attr(spec))
    if inspect.isawaitable(made):
        try:
            made = await made
        except (Exception, SystemExit) as error:
            raise TargetError(f"awaiting {spec}() failed: {_one_line(error)}") from None
    if isinstance(made, contextlib.AbstractAsyncContextManager):
        async with made as saver:
            yield _checked(spec, _entered(made, saver))
    elif isinstance(made, contextlib.AbstractContextManager):
        with made as saver:
            yield _checked(spec, _entered(made, saver))
    else:
        yield _checked(spec, made)


def _entered(made: Any, entered: Any) -> Any:
    """What entering `made` gave; `made` itself when it is a saver and that is not one
    (InMemorySaver of langgraph-checkpoint 3.0.0 enters as its own ExitStack)."""
    if isinstance(made, BaseCheckpointSaver) and not isinstance(entered, BaseCheckpointSaver):
        return made
    return entered


def implements(saver: BaseCheckpointSaver[Any], api: tuple[str, ...]) -> bool:
    """True when the saver's class defines every method of `api` (SYNC_API or ASYNC_API)
    itself, rather than inheriting the base class's NotImplementedError."""
    return all(
        getattr(type(saver), name, None) is not getattr(BaseCheckpointSaver, name) for name in api
    )


PROBE_CONFIG: Any = {"configurable": {"thread_id": "langgraph-repair-probe", "checkpoint_ns": ""}}
"""A thread read once to see whether a saver's sync methods work (any id would do)."""


def refuses_sync(saver: BaseCheckpointSaver[Any]) -> bool:
    """True when the saver implements the async API and its sync methods, though
    defined, raise NotImplementedError (some savers define them only to refuse,
    e.g. langgraph-checkpoint-plainredis's AsyncRedisSaver): one read of a thread
    tells. Any other outcome, an error included, leaves the choice to the class."""
    if not implements(saver, ASYNC_API):
        return False
    try:
        saver.get_tuple(PROBE_CONFIG)
    except NotImplementedError:
        return True
    except Exception:
        return False
    return False


def _checked(spec: str, saver: Any) -> BaseCheckpointSaver[Any]:
    if not isinstance(saver, BaseCheckpointSaver):
        raise TargetError(f"{spec} gave a {type(saver).__name__}, not a checkpoint saver")
    if not (implements(saver, SYNC_API) or implements(saver, ASYNC_API)):
        raise TargetError(
            f"{spec} gave a {type(saver).__name__}, which implements neither "
            f"{'/'.join(SYNC_API)} nor {'/'.join(ASYNC_API)}"
        )
    return saver
