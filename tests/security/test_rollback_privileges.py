"""A rollback checks its role's privileges as a prune does, before it deletes anything,
and names the GRANT it lacks; its dry run needs SELECT alone. A real role."""

from __future__ import annotations

import pytest

from tests.cli.test_cli_rollback import seeded
from tests.support.cli_runs import last_json, run_cli
from tests.support.pruning import stored_rows
from tests.support.roles import LANGGRAPH_TABLES, MakeRole, migrated, one_line_error
from tests.support.stores import cli_store


def test_a_role_that_may_not_delete_is_told_the_grant_and_nothing_is_deleted(
    request: pytest.FixtureRequest, make_role: MakeRole
) -> None:
    with cli_store("postgres", request) as (target, store):
        seeded(store.saver)
        migrated(target)
        before = stored_rows(store.saver)
        reader = make_role([f"GRANT SELECT ON {LANGGRAPH_TABLES}, langgraph_repair_migrations"])

        refused = run_cli("rollback", reader, "--run", "r2")
        looked = run_cli("rollback", reader, "--run", "r2", "--dry-run", "--json")

        assert "lacks DELETE on checkpoints" in one_line_error(refused)
        assert looked.returncode == 0, looked.stderr
        assert last_json(looked.stdout)["checkpoints_deleted"] == 1
        assert stored_rows(store.saver) == before
