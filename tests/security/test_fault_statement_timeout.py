"""A role whose `statement_timeout` is too low for a page of heads: the command says so
in one line naming the setting (exit 2, nothing written), never a traceback. The
command's own sessions set their limits (see `targets`), so the role's setting bites
through a saver the application opened, from a `module:attr` factory."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import psycopg
import pytest

from tests.support.cli_runs import repairs_per_thread_postgres, run_cli
from tests.support.factories import POSTGRES_ENV
from tests.support.many_threads import multiply
from tests.support.postgres_threads import BROKEN, put_chain, saver_on


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


def test_a_statement_timeout_too_low_is_named_in_one_line(hurried_role: str) -> None:
    unhurried = hurried_role + quote(" -c statement_timeout=0")  # to seed the store
    with saver_on(unhurried) as saver:
        put_chain(saver, "bricked", "", BROKEN)
    multiply(unhurried, ["bricked"], 2000)
    for command in ("scan", "repair"):  # a scan reads a page first; a repair checks first
        done = run_cli(
            command, "tests.support.factories:postgres_saver", "--min-idle", "0",
            **{POSTGRES_ENV: hurried_role},
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [
            "langgraph-repair: error: a statement ran too long (statement_timeout): "
            "canceling statement due to statement timeout"
        ]
    assert repairs_per_thread_postgres(unhurried) == {}
