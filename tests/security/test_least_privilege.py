"""Least privilege on the real server: real roles, granted exactly what each command needs,
running the command in a child process. Only `migrate` needs CREATE."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from langgraph_checkpoint_repair.batch import arepair_threads, repair_threads
from langgraph_checkpoint_repair.stores import StoreNotReady
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.cli_runs import last_json, postgres_rows, run_cli
from tests.support.histories import ai, human
from tests.support.integrity_threads import brick_with_nul
from tests.support.nul_rows import pending_writes, postgres_saver
from tests.support.roles import (
    LOOK_GRANTS,
    WRITE_GRANTS,
    MakeRole,
    migrated,
    one_line_error,
)
from tests.support.seeding import put_in_namespace
from tests.support.stores import Store

BROKEN_THREADS = ["bricked-0", "bricked-1"]


@pytest.fixture
async def broken_postgres(pg_uri: str) -> str:
    """LangGraph's tables, set up by their owner, holding two broken threads and a clean one."""
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        store = Store(saver, is_async=False)
        for thread_id in BROKEN_THREADS:
            await put_in_namespace(store, thread_id, "", [human("a"), ai("a1", "c1"), human("b")])
        await put_in_namespace(store, "clean", "", [human("a"), ai("a1", text="hello")])
    return pg_uri


LOOKS = [
    ["scan", "--json"],
    ["scan", "--list"],
    ["show", "--thread", "bricked-0"],
    ["repair", "--dry-run", "--min-idle", "0s"],
]


@pytest.mark.parametrize("look", LOOKS, ids=" ".join)
def test_select_alone_is_enough_to_look_and_writes_nothing(
    broken_postgres: str, make_role: MakeRole, look: list[str]
) -> None:
    owner = broken_postgres
    role = make_role(LOOK_GRANTS)
    before = postgres_rows(owner)
    result = run_cli(look[0], role, *look[1:])
    assert result.returncode == 0, result.stderr
    assert "bricked-0" in result.stdout
    assert postgres_rows(owner) == before


def test_repair_and_undo_need_no_create_once_the_owner_migrated(
    broken_postgres: str, make_role: MakeRole
) -> None:
    owner = broken_postgres
    migrated(owner)
    role = make_role(WRITE_GRANTS)
    repaired = run_cli("repair", role, "--min-idle", "0s", "--json")
    assert repaired.returncode == 0, repaired.stderr
    report = last_json(repaired.stdout)
    assert report["threads_repaired"] == len(BROKEN_THREADS)
    undone = run_cli("undo", role, "--run", report["run_id"], "--json")
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["threads_restored"] == len(BROKEN_THREADS)
    assert run_cli("migrate", role).stdout == "up to date\n"  # current: read, not created


def test_without_migrate_repair_asks_for_it_and_writes_nothing(
    broken_postgres: str, make_role: MakeRole
) -> None:
    owner = broken_postgres
    role = make_role([*LOOK_GRANTS, "GRANT INSERT, UPDATE ON checkpoints, checkpoint_blobs"])
    before = postgres_rows(owner)
    line = one_line_error(run_cli("repair", role, "--min-idle", "0s"))
    assert "audit tables are missing" in line
    assert "langgraph-repair migrate" in line
    assert postgres_rows(owner) == before
    one_line_error(run_cli("undo", role, "--run", "some-run"))  # no run can be recorded
    assert postgres_rows(owner) == before


@pytest.mark.parametrize(
    ("revoked", "named"),
    [
        ("REVOKE INSERT ON checkpoint_blobs", "INSERT on checkpoint_blobs"),
        ("REVOKE UPDATE ON checkpoints", "UPDATE on checkpoints"),
        ("REVOKE UPDATE ON langgraph_repair_runs", "UPDATE on langgraph_repair_runs"),
        ("REVOKE INSERT ON langgraph_repair_threads", "INSERT on langgraph_repair_threads"),
        ("REVOKE UPDATE ON checkpoint_writes", "UPDATE on checkpoint_writes"),
        ("REVOKE DELETE ON checkpoint_writes", "DELETE on checkpoint_writes"),
        ("REVOKE INSERT ON langgraph_repair_rewrites", "INSERT on langgraph_repair_rewrites"),
    ],
)
def test_a_missing_privilege_is_named_with_its_grant_before_any_write(
    broken_postgres: str, make_role: MakeRole, revoked: str, named: str
) -> None:
    owner = broken_postgres
    migrated(owner)
    role_uri = make_role(WRITE_GRANTS)
    role = urlsplit(role_uri).username
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute(f"{revoked} FROM {role}")
    before = postgres_rows(owner)
    line = one_line_error(run_cli("repair", role_uri, "--min-idle", "0s"))
    privilege, _, table = named.partition(" on ")
    assert f"lacks {named}" in line
    assert f"GRANT {privilege} ON {table} TO {role};" in line
    assert postgres_rows(owner) == before


def test_a_look_without_select_names_the_table(broken_postgres: str, make_role: MakeRole) -> None:
    role_uri = make_role(["GRANT SELECT ON checkpoints, checkpoint_blobs"])
    line = one_line_error(run_cli("scan", role_uri))
    assert "lacks SELECT on checkpoint_writes" in line
    assert "GRANT SELECT ON checkpoint_writes TO" in line


async def test_the_async_store_checks_the_same(broken_postgres: str, make_role: MakeRole) -> None:
    owner = broken_postgres
    role = make_role([*LOOK_GRANTS, "GRANT INSERT, UPDATE ON checkpoints, checkpoint_blobs"])
    async with AsyncPostgresSaver.from_conn_string(role) as saver:
        with pytest.raises(StoreNotReady, match="langgraph-repair migrate"):
            await arepair_threads(saver, min_idle=0)
    migrated(owner)
    role = make_role(WRITE_GRANTS)
    async with AsyncPostgresSaver.from_conn_string(role) as saver:
        report = await arepair_threads(saver, min_idle=0)
    assert report.threads_repaired == len(BROKEN_THREADS)


async def test_a_look_refuses_writes_at_the_server(broken_postgres: str) -> None:
    """Even as the tables' owner, a saver opened for a look cannot write."""
    refused = pytest.raises(psycopg.errors.ReadOnlySqlTransaction)
    with open_saver(broken_postgres, read_only=True) as saver, refused:
        repair_threads(saver, min_idle=0)
    refused = pytest.raises(psycopg.errors.ReadOnlySqlTransaction)
    async with aopen_saver(broken_postgres, read_only=True) as asaver:
        with refused:
            await arepair_threads(asaver, min_idle=0)
    assert postgres_rows(broken_postgres)["checkpoints"] == 3  # nothing written, no table made
    assert "langgraph_repair_runs" not in postgres_rows(broken_postgres)


def test_a_nul_repair_and_its_undo_need_no_more_than_a_repair(
    pg_uri: str, make_role: MakeRole
) -> None:
    """The one repair that updates a row (a pending write holding U+0000) runs, and is
    undone, with the same grants as every other repair."""
    with postgres_saver(pg_uri) as saver:
        brick_with_nul(saver, "nul")
    migrated(pg_uri)
    before = pending_writes(pg_uri, "nul")
    role = make_role(WRITE_GRANTS)
    repaired = run_cli("repair", role, "--min-idle", "0s", "--json")
    assert repaired.returncode == 0, repaired.stderr
    report = last_json(repaired.stdout)
    assert report["writes_rewritten"] == 1
    assert pending_writes(pg_uri, "nul") != before
    undone = run_cli("undo", role, "--run", report["run_id"], "--json")
    assert undone.returncode == 0, undone.stderr
    assert last_json(undone.stdout)["writes_restored"] == 1
    assert pending_writes(pg_uri, "nul") == before
