"""Secrets stay secret: whatever fails, no output, log line or audit row of the real CLI
echoes a password from the target; the target may come from LANGGRAPH_REPAIR_TARGET;
libpq's own variables and files work as with psql."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver

from langgraph_checkpoint_repair.redact import passwords_in, scrub
from langgraph_checkpoint_repair.targets import open_saver
from tests.security.test_strict_loading import broken, plant
from tests.support.cli_runs import last_json, run_cli

SECRET = f"hunter2-{uuid.uuid4().hex[:10]}"


def assert_secret_kept(done: Any, secret: str = SECRET) -> None:
    assert secret not in done.stdout, done.stdout
    assert secret not in done.stderr, done.stderr
    assert quote(secret, safe="") not in done.stdout + done.stderr


LEAKING_TARGETS = {
    "uppercase scheme, wrong host": f"POSTGRESQL://app:{SECRET}@no-such-host.invalid/db",
    "refused connection": f"postgresql://app:{SECRET}@127.0.0.1:1/db",
    "missing database": f"postgres://postgres:{SECRET}@127.0.0.1:5432/no_db_{uuid.uuid4().hex}",
    "SQLAlchemy scheme": f"postgres+psycopg://app:{SECRET}@127.0.0.1/db",
    "unknown scheme": f"mysql://app:{SECRET}@127.0.0.1/db",
    "bad percent-escape": f"postgresql://app:{SECRET}%zz@127.0.0.1/db",
    "password in the query": f"postgresql://127.0.0.1:1/db?user=app&password={SECRET}",
    "key=value conninfo": f"host=127.0.0.1 port=1 user=app password={SECRET}",
}


@pytest.mark.parametrize("target", LEAKING_TARGETS.values(), ids=LEAKING_TARGETS.keys())
def test_a_failing_target_never_shows_its_password(postgres_server: str, target: str) -> None:
    done = run_cli("scan", target, "--json", "-vv")  # debug logs too
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("langgraph-repair: error: "), done.stderr
    assert "Traceback" not in done.stderr
    assert_secret_kept(done)


@pytest.mark.parametrize("command", ["scan", "repair", "undo", "migrate", "show"])
def test_every_command_keeps_the_password_of_a_target_from_the_environment(
    command: str,
) -> None:
    extra = {"undo": ["--run", "run-x"], "show": ["--thread", "t"]}.get(command, [])
    target = f"postgresql://app:{SECRET}@127.0.0.1:1/db"
    done = run_cli(command, *extra, "--json", LANGGRAPH_REPAIR_TARGET=target)
    assert done.returncode == 2
    assert "cannot connect to PostgreSQL" in done.stderr  # the target from the variable
    assert_secret_kept(done)


def test_the_scheme_matches_in_any_case(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        plant(saver, "t", {"messages": broken()})
    scheme, rest = pg_uri.split("://", 1)
    done = run_cli("scan", f"{scheme.upper()}://{rest}", "--min-idle", "0", "--json")
    assert done.returncode == 0, done.stderr
    assert last_json(done.stdout)["threads_needing_repair"] == 1


def test_the_target_comes_from_the_environment_for_every_command(tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    with open_saver(target, setup=True) as saver:
        plant(saver, "t", {"messages": broken()})
    env = {"LANGGRAPH_REPAIR_TARGET": target}
    scanned = run_cli("scan", "--min-idle", "0", "--json", **env)
    assert last_json(scanned.stdout)["threads_needing_repair"] == 1
    shown = run_cli("show", "--thread", "t", "--json", **env)
    assert last_json(shown.stdout)["outcome"] == "would_repair"
    repaired = run_cli("repair", "--min-idle", "0", "--json", **env)
    run_id = last_json(repaired.stdout)["run_id"]
    assert last_json(repaired.stdout)["threads_repaired"] == 1
    undone = run_cli("undo", "--run", run_id, "--json", **env)
    assert last_json(undone.stdout)["threads_restored"] == 1
    migrated = run_cli("migrate", "--json", **env)
    assert last_json(migrated.stdout) == {"applied": [], "audit_tables": False}


def test_a_target_on_the_command_line_wins_over_the_environment(tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path / 'missing.sqlite'}"
    done = run_cli("scan", missing, LANGGRAPH_REPAIR_TARGET="postgresql://127.0.0.1:1/db")
    assert done.returncode == 2
    assert "no such SQLite file" in done.stderr


def test_no_target_anywhere_is_a_usage_error() -> None:
    done = run_cli("scan", "--json", LANGGRAPH_REPAIR_TARGET="")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "langgraph-repair: error: no TARGET: give one, or set LANGGRAPH_REPAIR_TARGET\n"
    )


@pytest.fixture
def role(pg_uri: str) -> Iterator[tuple[str, str]]:
    """A login role with a password and every privilege on the test's schema."""
    name, password = f"repair_{uuid.uuid4().hex[:10]}", f"pw-{uuid.uuid4().hex}"
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
    grant_all(pg_uri, name)
    yield name, password
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {name}")
        conn.execute(f"DROP ROLE {name}")


def grant_all(pg_uri: str, name: str) -> None:
    """Every privilege on the test's schema and the tables in it now."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()
        assert schema is not None
        conn.execute(f"GRANT ALL ON SCHEMA {schema[0]} TO {name}")
        conn.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA {schema[0]} TO {name}")


def as_role(pg_uri: str, name: str, password: str | None) -> str:
    """The test's URI, logging in as `name` (with `password` in the URL, if given)."""
    userinfo = f"{name}:{quote(password, safe='')}" if password else name
    return pg_uri.replace("postgresql://postgres@", f"postgresql://{userinfo}@", 1)


def test_audit_rows_output_and_logs_of_a_real_repair_keep_the_password(
    pg_uri: str, role: tuple[str, str]
) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        plant(saver, "t", {"messages": broken()})
    grant_all(pg_uri, role[0])
    target = as_role(pg_uri, *role)
    done = run_cli("repair", target, "--min-idle", "0", "--json", "-vv")
    assert done.returncode == 0, done.stderr
    assert last_json(done.stdout)["threads_repaired"] == 1
    assert_secret_kept(done, role[1])
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(
            "SELECT r::text, t::text FROM langgraph_repair_runs r "
            "JOIN langgraph_repair_threads t USING (run_id)"
        ).fetchall()
        checkpoints = conn.execute("SELECT metadata::text FROM checkpoints").fetchall()
    assert rows and checkpoints
    assert role[1] not in str(rows) + str(checkpoints)


def test_pgservice_names_the_database_and_schema(pg_uri: str, tmp_path: Path) -> None:
    """libpq reads the service file: only it names the schema this test created."""
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        plant(saver, "t", {"messages": broken()})
    with psycopg.connect(pg_uri) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()
    assert schema is not None
    services = tmp_path / "pg_service.conf"
    services.write_text(
        "[repair_test]\nhost=127.0.0.1\nport=5432\nuser=postgres\ndbname=test\n"
        f"options=-c search_path={schema[0]}\n"
    )
    env = {"PGSERVICEFILE": str(services), "PGSERVICE": "repair_test"}
    done = run_cli(
        "scan", "--min-idle", "0", "--json", LANGGRAPH_REPAIR_TARGET="postgresql://", **env
    )
    assert done.returncode == 0, done.stderr
    assert last_json(done.stdout)["threads_needing_repair"] == 1
    unnamed = run_cli("scan", "postgresql://", "--json", PGSERVICEFILE=str(services))
    assert unnamed.returncode == 2  # without the service, libpq's defaults name no such store


def pooled(saver: Any) -> Any:
    """A connection from the pool of a saver `open_saver` made."""
    return saver.conn.connection()


@pytest.mark.parametrize("source", ["PGPASSWORD", "PGPASSFILE"])
def test_libpq_takes_the_password_from_its_own_variables(
    pg_uri: str, role: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    """The server trusts local connections, so the password the connection used is read
    back from libpq: it came from the variable, the target carrying none."""
    name, password = role
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
    grant_all(pg_uri, name)  # the tables made just now: a look needs SELECT on them
    if source == "PGPASSWORD":
        monkeypatch.setenv("PGPASSWORD", password)
    else:
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"127.0.0.1:5432:test:{name}:{password}\n")
        passfile.chmod(0o600)
        monkeypatch.setenv("PGPASSFILE", str(passfile))
    with open_saver(as_role(pg_uri, name, None)) as opened, pooled(opened) as conn:
        assert (conn.info.user, conn.info.password) == (name, password)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://app:pw@db/x", "postgresql://app:***@db/x"),
        ("POSTGRES://app:p%40ss@db:5/x?sslmode=require", "POSTGRES://app:***@db:5/x?sslmode=require"),
        ("postgresql://db/x?user=a&password=pw&sslmode=require", "postgresql://db/x?user=a&password=***&sslmode=require"),
        ("host=db password='a b' user=app", "host=db password=*** user=app"),
        ("host=db PASSWORD = pw", "host=db PASSWORD = ***"),
        ("postgresql://app@db/x", "postgresql://app@db/x"),
    ],
)  # fmt: skip
def test_scrub_masks_every_dsn_form(text: str, shown: str) -> None:
    assert scrub(text) == shown


def test_the_passwords_of_a_dsn_are_found_as_written_and_decoded() -> None:
    assert passwords_in("postgresql://app:p%40ss@db/x?password=q") == {"p%40ss", "p@ss", "q"}
