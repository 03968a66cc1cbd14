"""A prune checks its role's privileges before it deletes anything, and names the GRANT it
lacks; a dry run needs SELECT alone. Real roles, made with exactly the grants named."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver

from tests.retention.test_prune_cli import seed_chats
from tests.support.cli_runs import last_json, postgres_rows, run_cli
from tests.support.pruning import thread
from tests.support.roles import LANGGRAPH_TABLES, MakeRole, migrated


def seeded(pg_uri: str) -> dict[str, int]:
    """Two chats, the audit tables made; every table's rows counted."""
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_chats(saver)
    migrated(pg_uri)
    return postgres_rows(pg_uri)


def test_a_role_without_delete_is_told_the_grant_and_nothing_is_deleted(
    pg_uri: str, make_role: MakeRole
) -> None:
    before = seeded(pg_uri)
    reader = make_role([f"GRANT SELECT ON {LANGGRAPH_TABLES}, langgraph_repair_migrations"])

    refused = run_cli("prune", reader, "--min-idle", "0")

    assert refused.returncode == 2, refused.stderr
    assert "lacks DELETE on checkpoints" in refused.stderr
    assert "GRANT DELETE, UPDATE ON checkpoints TO" in refused.stderr
    assert postgres_rows(pg_uri) == before
    looked = run_cli("prune", reader, "--min-idle", "0", "--dry-run", "--json")
    assert looked.returncode == 0, looked.stderr
    assert last_json(looked.stdout)["checkpoints_deleted"] == 16
    assert postgres_rows(pg_uri) == before


def test_a_role_with_the_prune_grants_prunes_and_undoes(pg_uri: str, make_role: MakeRole) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_chats(saver)
    migrated(pg_uri)
    archive = "langgraph_repair_pruned_checkpoints, langgraph_repair_pruned_blobs, "
    archive += "langgraph_repair_pruned_writes, langgraph_repair_pruned_parents"
    pruner = make_role(
        [
            f"GRANT SELECT, DELETE ON {LANGGRAPH_TABLES}",
            "GRANT UPDATE, INSERT ON checkpoints",
            "GRANT INSERT ON checkpoint_blobs, checkpoint_writes",
            "GRANT SELECT, INSERT, UPDATE ON langgraph_repair_runs, langgraph_repair_migrations",
            f"GRANT SELECT, INSERT, DELETE ON {archive}",
        ]
    )
    before = postgres_rows(pg_uri)

    pruned = run_cli("prune", pruner, "--min-idle", "0", "--json")
    assert pruned.returncode == 0, pruned.stderr
    assert postgres_rows(pg_uri)["checkpoints"] == 2
    undone = run_cli("undo", pruner, "--run", last_json(pruned.stdout)["run_id"])
    assert undone.returncode == 0, undone.stderr

    after = postgres_rows(pg_uri)
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        assert after[table] == before[table]


ARCHIVE = (
    "langgraph_repair_pruned_checkpoints, langgraph_repair_pruned_blobs, "
    "langgraph_repair_pruned_writes, langgraph_repair_pruned_parents"
)
PRUNE_GRANTS = [
    f"GRANT SELECT, DELETE ON {LANGGRAPH_TABLES}",
    "GRANT UPDATE ON checkpoints",
    "GRANT SELECT, INSERT, UPDATE ON langgraph_repair_runs, langgraph_repair_migrations",
    f"GRANT INSERT ON {ARCHIVE}",
]
"""A default prune's grants, as the least-privilege page lists them."""
UNDO_GRANTS = [
    f"GRANT SELECT, INSERT ON {LANGGRAPH_TABLES}",
    "GRANT UPDATE ON checkpoints",
    "GRANT SELECT ON langgraph_repair_runs, langgraph_repair_migrations",
    f"GRANT SELECT, DELETE ON {ARCHIVE}",
]
"""An undo of a prune's grants, as the least-privilege page lists them."""


def test_a_compacting_prune_needs_insert_and_names_the_grant(
    pg_uri: str, make_role: MakeRole
) -> None:
    before = seeded(pg_uri)
    pruner = make_role(PRUNE_GRANTS)

    refused = run_cli("prune", pruner, "--min-idle", "0", "--compact")

    assert refused.returncode == 2, refused.stderr
    assert "lacks INSERT on checkpoints" in refused.stderr
    assert postgres_rows(pg_uri) == before
    plain = run_cli("prune", pruner, "--min-idle", "0", "--json")
    assert plain.returncode == 0, plain.stderr


def test_undoing_a_compacting_prune_also_needs_delete(pg_uri: str, make_role: MakeRole) -> None:
    pytest.importorskip("deepagents", reason="delta channels need langgraph 1.2")
    from tests.support.delta_agents import delta_chat

    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        graph = delta_chat(saver)
        for turn in range(7):
            graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, thread("deep"))
    migrated(pg_uri)
    before = postgres_rows(pg_uri)
    compactor = make_role([*PRUNE_GRANTS, "GRANT INSERT ON checkpoints, checkpoint_blobs"])
    pruned = run_cli("prune", compactor, "--min-idle", "0", "--compact", "--json")
    assert pruned.returncode == 0, pruned.stderr
    assert last_json(pruned.stdout)["threads_compacted"] == 1
    run_id = last_json(pruned.stdout)["run_id"]

    refused = run_cli("undo", make_role(UNDO_GRANTS), "--run", run_id)
    assert refused.returncode == 2, refused.stderr
    assert "lacks DELETE on checkpoints" in refused.stderr

    undoer = make_role([*UNDO_GRANTS, f"GRANT DELETE ON {LANGGRAPH_TABLES}"])
    undone = run_cli("undo", undoer, "--run", run_id)
    assert undone.returncode == 0, undone.stderr
    after = postgres_rows(pg_uri)
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        assert after[table] == before[table]
