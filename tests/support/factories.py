"""`module:attr` targets for the CLI tests: good and bad saver factories, as users write them.

The savers keep their data in the SQLite file named by `REPAIR_TEST_SQLITE`, so a
command run in a child process sees what the test seeded.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

SQLITE_ENV = "REPAIR_TEST_SQLITE"


def _sqlite() -> SqliteSaver:
    """A saver over a connection its owner closes when the process ends, as an
    application does (Python 3.13 warns about one that is never closed)."""
    conn = sqlite3.connect(os.environ[SQLITE_ENV], check_same_thread=False)
    atexit.register(conn.close)
    return SqliteSaver(conn)


class AsyncOnlySaver(BaseCheckpointSaver[Any]):
    """A saver implementing only the async API (as some third-party savers do);
    it stores through a SqliteSaver."""

    def __init__(self, inner: SqliteSaver) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for tup in self.inner.list(config, filter=filter, before=before, limit=limit):
            yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.inner.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.inner.put_writes(config, writes, task_id, task_path)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)


class SyncRefusingSaver(AsyncOnlySaver):
    """An async saver whose sync methods exist only to refuse, as
    langgraph-checkpoint-plainredis's AsyncRedisSaver's do."""

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        raise NotImplementedError("synchronous get_tuple() is unavailable; use aget_tuple()")

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        raise NotImplementedError("synchronous list() is unavailable; use alist()")

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        raise NotImplementedError("synchronous put() is unavailable; use aput()")


def sync_refusing_saver() -> SyncRefusingSaver:
    return SyncRefusingSaver(_sqlite())


def async_only_saver() -> AsyncOnlySaver:
    """A plain factory of an async-only saver."""
    return AsyncOnlySaver(_sqlite())


async def async_def_factory() -> AsyncOnlySaver:
    """An `async def` factory: the command must await it, with no warning."""
    return AsyncOnlySaver(_sqlite())


@contextlib.asynccontextmanager
async def async_context_factory() -> AsyncIterator[AsyncOnlySaver]:
    saver = AsyncOnlySaver(_sqlite())
    try:
        yield saver
    finally:
        saver.inner.conn.close()


@contextlib.contextmanager
def sqlite_saver() -> Iterator[SqliteSaver]:
    """A sync context-manager factory over the same file."""
    saver = _sqlite()
    try:
        yield saver
    finally:
        saver.conn.close()


def needs_arguments(uri: str) -> SqliteSaver:
    """A factory that cannot be called with no arguments."""
    return SqliteSaver(sqlite3.connect(uri))


def raises() -> SqliteSaver:
    raise ConnectionError("the secrets vault did not answer")


async def exits_when_awaited() -> SqliteSaver:
    """An async factory whose code ends the process the way a CLI helper would."""
    raise SystemExit("no saver configured")


class NoFullListingSaver(InMemorySaver):
    """Like object-storage savers: listing needs a thread id."""

    def list(self, config: RunnableConfig | None, **kwargs: Any) -> Iterator[CheckpointTuple]:
        if config is None:
            raise NotImplementedError("listing every thread is not supported; pass a thread id")
        return super().list(config, **kwargs)


def no_full_listing() -> NoFullListingSaver:
    return NoFullListingSaver()


def nothing_implemented() -> BaseCheckpointSaver[Any]:
    return BaseCheckpointSaver()


POSTGRES_ENV = "REPAIR_TEST_POSTGRES"


@contextlib.asynccontextmanager
async def async_postgres_saver() -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """An AsyncPostgresSaver on one connection to `REPAIR_TEST_POSTGRES`, as apps open one."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(os.environ[POSTGRES_ENV]) as saver:
        yield saver


@contextlib.contextmanager
def postgres_saver() -> Iterator[BaseCheckpointSaver[Any]]:
    """A PostgresSaver on one connection to `REPAIR_TEST_POSTGRES`, opened as an
    application opens it: with the role's own settings, none of the command's."""
    with PostgresSaver.from_conn_string(os.environ[POSTGRES_ENV]) as saver:
        yield saver


SLOW_SETUP = "SELECT pg_sleep(0.05)"
"""A session set-up statement that always outlasts a role whose limit is 1 ms."""


def _pool_options() -> dict[str, Any]:
    """A small pool as an application opens one, that gives up waiting after 2 s."""
    from psycopg.rows import dict_row

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    return {"kwargs": kwargs, "min_size": 1, "max_size": 2, "timeout": 2.0, "open": False}


@contextlib.contextmanager
def pooled_postgres_saver() -> Iterator[BaseCheckpointSaver[Any]]:
    """A PostgresSaver over a pool whose sessions each run `SLOW_SETUP` first."""
    from psycopg_pool import ConnectionPool

    def configure(conn: Any) -> None:
        conn.execute(SLOW_SETUP)

    with ConnectionPool(os.environ[POSTGRES_ENV], configure=configure, **_pool_options()) as pool:
        yield PostgresSaver(pool)


@contextlib.asynccontextmanager
async def async_pooled_postgres_saver() -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The async twin of `pooled_postgres_saver`."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    async def configure(conn: Any) -> None:
        await conn.execute(SLOW_SETUP)

    pool = AsyncConnectionPool(os.environ[POSTGRES_ENV], configure=configure, **_pool_options())
    async with pool:
        yield AsyncPostgresSaver(pool)
