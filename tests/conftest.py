"""Shared fixtures: the machine's real PostgreSQL, one fresh schema per test."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import RunReport
from tests.support import memory_target
from tests.support.redis_server import redis_server
from tests.support.report_checks import assert_consistent
from tests.support.seeding import Seeded, seed
from tests.support.stores import Store, open_store

POSTGRES_URI = os.environ.get("TEST_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/test")


def _postgres_error() -> str | None:
    try:
        with psycopg.connect(POSTGRES_URI, connect_timeout=3):
            return None
    except psycopg.Error as error:
        return str(error).strip().splitlines()[0]


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The server's URI; skips on a laptop without PostgreSQL, fails in CI."""
    error = _postgres_error()
    if error is not None:
        reason = f"PostgreSQL not reachable at {POSTGRES_URI} (set TEST_POSTGRES_URI): {error}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return POSTGRES_URI


@contextlib.contextmanager
def fresh_schema(postgres_server: str) -> Iterator[str]:
    """A URI whose connections see only a fresh, empty schema of their own."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in postgres_server else "?"
    yield f"{postgres_server}{separator}options={quote(f'-c search_path={schema}')}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def pg_uri(postgres_server: str) -> Iterator[str]:
    """A URI whose connections see only a fresh, empty schema of their own."""
    with fresh_schema(postgres_server) as uri:
        yield uri


@pytest.fixture
def other_pg_uri(postgres_server: str) -> Iterator[str]:
    """Another fresh schema of the same database, beside `pg_uri`'s."""
    with fresh_schema(postgres_server) as uri:
        yield uri


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """A Redis server of the session's own, with RedisJSON and RediSearch."""
    with redis_server() as url:
        yield url


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    """That server, emptied: RediSearch indexes database 0 only, so a test has the
    whole keyspace to itself instead of a database of its own."""
    import redis

    with redis.Redis.from_url(redis_server_url) as client:
        client.flushall()
    return redis_server_url


@pytest.fixture(autouse=True, scope="session")
def consistent_summaries() -> Iterator[None]:
    """Every run summary the suite makes in-process agrees with itself (the property
    `tests/support/report_checks.py` states), whatever the run found."""
    summary = RunReport.to_json

    def checked(self: RunReport) -> dict[str, Any]:
        payload = summary(self)
        assert_consistent(payload)
        return payload

    RunReport.to_json = checked  # type: ignore[method-assign]
    yield
    RunReport.to_json = summary  # type: ignore[method-assign]


SAVER_KINDS = ["memory", "sqlite", "postgres", "amemory", "aiosqlite", "apostgres"]


@pytest.fixture(params=SAVER_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """Each real saver, sync (driven with invoke) and async (driven with ainvoke)."""
    async with open_store(request.param, tmp_path, request) as opened:
        yield opened


# Seeded stores named as the command line names them (TARGET strings).


@pytest.fixture
async def sqlite_target(tmp_path: Path) -> tuple[str, Seeded]:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        seeded = await seed(Store(saver, is_async=False))
    return f"sqlite:///{path}", seeded


@pytest.fixture
async def postgres_target(pg_uri: str) -> tuple[str, Seeded]:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seeded = await seed(Store(saver, is_async=False))
    return pg_uri, seeded


@pytest.fixture
async def memory_target_seeded() -> tuple[str, Seeded]:
    memory_target.SAVER.storage.clear()
    memory_target.SAVER.writes.clear()
    memory_target.SAVER.blobs.clear()
    seeded = await seed(Store(memory_target.SAVER, is_async=False))
    return "tests.support.memory_target:saver", seeded


@pytest.fixture(params=["sqlite_target", "postgres_target", "memory_target_seeded"])
def target(request: pytest.FixtureRequest) -> tuple[str, Seeded]:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]
