"""One face for sync and async savers, so each scenario runs against all six."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool


@dataclass
class Store:
    """A real saver and whether to drive it through the sync or the async API."""

    saver: BaseCheckpointSaver[Any]
    is_async: bool

    async def invoke(self, graph: CompiledStateGraph[Any], value: Any, config: Any) -> Any:
        if self.is_async:
            return await graph.ainvoke(value, config)
        return graph.invoke(value, config)

    async def get_state(
        self, graph: CompiledStateGraph[Any], config: Any, subgraphs: bool = False
    ) -> StateSnapshot:
        if self.is_async:
            return await graph.aget_state(config, subgraphs=subgraphs)
        return graph.get_state(config, subgraphs=subgraphs)

    async def update_state(
        self, graph: CompiledStateGraph[Any], config: Any, values: Any, as_node: str | None = None
    ) -> RunnableConfig:
        if self.is_async:
            return await graph.aupdate_state(config, values, as_node=as_node)
        return graph.update_state(config, values, as_node=as_node)

    async def get_tuple(
        self, saver: BaseCheckpointSaver[Any], config: RunnableConfig
    ) -> CheckpointTuple | None:
        if self.is_async:
            return await saver.aget_tuple(config)
        return saver.get_tuple(config)

    async def list(
        self, saver: BaseCheckpointSaver[Any], config: RunnableConfig | None
    ) -> list[CheckpointTuple]:
        if self.is_async:
            return [t async for t in saver.alist(config)]
        return list(saver.list(config))


POOL_SETTINGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


@contextlib.asynccontextmanager
async def open_store(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, *, pooled: bool = False
) -> AsyncIterator[Store]:
    """A real saver of `kind`; with `pooled`, PostgreSQL through a pool, as an
    application that shares one saver between its tasks opens it."""
    path = str(tmp_path / "threads.sqlite")
    if kind in ("memory", "amemory"):
        yield Store(InMemorySaver(), is_async=kind == "amemory")
    elif kind == "sqlite":
        with SqliteSaver.from_conn_string(path) as saver:
            yield Store(saver, is_async=False)
    elif kind == "aiosqlite":
        async with AsyncSqliteSaver.from_conn_string(path) as asaver:
            yield Store(asaver, is_async=True)
    elif kind == "postgres":
        uri = request.getfixturevalue("pg_uri")
        with contextlib.ExitStack() as stack:
            if pooled:
                pool = stack.enter_context(ConnectionPool(uri, max_size=4, kwargs=POOL_SETTINGS))
                pg = PostgresSaver(pool)  # type: ignore[arg-type]
            else:
                pg = stack.enter_context(PostgresSaver.from_conn_string(uri))
            pg.setup()
            yield Store(pg, is_async=False)
    else:
        uri = request.getfixturevalue("pg_uri")
        async with contextlib.AsyncExitStack() as astack:
            if pooled:
                apool = AsyncConnectionPool(uri, max_size=4, kwargs=POOL_SETTINGS, open=False)
                await astack.enter_async_context(apool)
                apg = AsyncPostgresSaver(apool)  # type: ignore[arg-type]
            else:
                apg = await astack.enter_async_context(AsyncPostgresSaver.from_conn_string(uri))
            await apg.setup()
            yield Store(apg, is_async=True)


@contextlib.contextmanager
def cli_store(kind: str, request: pytest.FixtureRequest) -> Iterator[tuple[str, Store]]:
    """A real store as the CLI names it, and the same store for seeding and checking."""
    if kind == "postgres":
        uri = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
            yield uri, Store(saver, is_async=False)
    else:
        path = request.getfixturevalue("tmp_path") / "threads.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as sqlite:
            yield f"sqlite:///{path}", Store(sqlite, is_async=False)
