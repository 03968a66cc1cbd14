"""Fixtures of the security tests: real PostgreSQL roles (`make_role`, `hurried_role`)."""

import uuid
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import psycopg
import pytest

from tests.support.roles import make_role

__all__ = ["make_role"]


@pytest.fixture
def hurried_role(postgres_server: str) -> Iterator[str]:
    """A URI logging in as a fresh role whose statements may run 1 ms, in its own schema."""
    role = f"hurried_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"CREATE SCHEMA {role} AUTHORIZATION {role}")
        admin.execute(f"ALTER ROLE {role} SET statement_timeout = '1ms'")
    parts = urlsplit(postgres_server)
    netloc = f"{role}@{parts.hostname}:{parts.port or 5432}"
    yield parts._replace(netloc=netloc, query=f"options={quote(f'-c search_path={role}')}").geturl()
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA {role} CASCADE")
        admin.execute(f"DROP ROLE {role}")
