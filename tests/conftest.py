"""Shared fixtures: the machine's real PostgreSQL, one fresh schema per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import psycopg
import pytest

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


@pytest.fixture
def pg_uri(postgres_server: str) -> Iterator[str]:
    """A URI whose connections see only a fresh, empty schema of their own."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in postgres_server else "?"
    yield f"{postgres_server}{separator}options={quote(f'-c search_path={schema}')}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
