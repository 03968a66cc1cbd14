"""Real PostgreSQL roles for the least-privilege tests: each made with exactly the grants
a test names, in the test's schema, and dropped after it."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import psycopg
import pytest

from tests.support.cli_runs import run_cli

LANGGRAPH_TABLES = "checkpoints, checkpoint_blobs, checkpoint_writes"
AUDIT_TABLES = (
    "langgraph_repair_migrations, langgraph_repair_runs, langgraph_repair_threads, "
    "langgraph_repair_rewrites"
)
LOOK_GRANTS = [f"GRANT SELECT ON {LANGGRAPH_TABLES}"]
WRITE_GRANTS = [  # what the default policy's repair and its undo need
    f"GRANT SELECT ON {LANGGRAPH_TABLES}, {AUDIT_TABLES}",
    "GRANT INSERT ON checkpoints, checkpoint_blobs, langgraph_repair_runs, "
    "langgraph_repair_threads, langgraph_repair_rewrites",
    "GRANT UPDATE ON checkpoints, checkpoint_writes, langgraph_repair_runs",
    "GRANT INSERT, DELETE ON checkpoint_writes",
]

MakeRole = Callable[[list[str]], str]


@pytest.fixture
def make_role(pg_uri: str) -> Iterator[MakeRole]:
    """A function making a LOGIN role granted `grants` (each "GRANT ... ON tables") in the
    test's schema, and returning a DSN that connects as it; every role is dropped after."""
    schema = urlsplit(pg_uri).query.rsplit("search_path%3D", 1)[-1]
    roles: list[str] = []

    def make(grants: list[str]) -> str:
        role = f"repair_role_{uuid.uuid4().hex[:10]}"
        roles.append(role)
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN")
            conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            for grant in grants:
                conn.execute(f"{grant} TO {role}")
        return pg_uri.replace("//postgres@", f"//{role}@", 1)

    yield make
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        for role in roles:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def migrated(uri: str) -> None:
    result = run_cli("migrate", uri)
    assert result.returncode == 0, result.stderr


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The run's only stderr line, after checking it stopped as a usage error (exit 2)."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]
