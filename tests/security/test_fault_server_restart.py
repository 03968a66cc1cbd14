"""The PostgreSQL server itself restarted in the middle of a `repair`, on a cluster the
test owns: the run stops within seconds with its summary so far and exit 1; a rerun
after the restart finishes; no head is repaired twice, and the audit rows are exactly
the repair checkpoints."""

from __future__ import annotations

import psycopg
import pytest

from tests.security.test_faults import SLOW, THREADS, lost_after_writing, seed_bricked
from tests.support.cli_runs import (
    repairs_per_thread_postgres,
    run_cli,
    start_cli,
)
from tests.support.postgres_cluster import own_cluster

AUDITED = "SELECT thread_id, repair_checkpoint_id FROM langgraph_repair_threads"
WRITTEN = "SELECT thread_id, checkpoint_id FROM checkpoints WHERE metadata ? 'langgraph_repair_run'"


def rows(uri: str, sql: str) -> set[tuple[str, str]]:
    with psycopg.connect(uri) as conn:
        return {(str(a), str(b)) for a, b in conn.execute(sql).fetchall()}


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_a_server_restarted_mid_repair_stops_the_run_and_a_rerun_finishes(
    mode: str,
) -> None:
    with own_cluster() as cluster:
        uri = cluster.uri
        await seed_bricked(uri)
        assert run_cli("migrate", uri).returncode == 0
        process = start_cli("repair", uri, *SLOW, "--json")
        summary = lost_after_writing(process, uri, lambda: cluster.restart(mode))
        assert summary["checkpoints_written"] < len(THREADS)
        assert summary["errors"] == []
        written = repairs_per_thread_postgres(uri)
        assert set(written.values()) == {1}
        assert len(written) >= summary["checkpoints_written"]

        finish = run_cli("repair", uri, "--min-idle", "0", "--json")
        assert finish.returncode == 0, finish.stderr
        assert repairs_per_thread_postgres(uri) == dict.fromkeys(THREADS, 1)
        assert rows(uri, AUDITED) == rows(uri, WRITTEN)
        assert len(rows(uri, AUDITED)) == len(THREADS)
