"""Eight shards of one PostgreSQL store at once (more processes than cores), some
killed with SIGKILL mid-run and started again, as a Kubernetes Indexed Job restarts
failed pods: at the end every broken head is repaired exactly once."""

from __future__ import annotations

import subprocess

from tests.support.cli_runs import (
    last_json,
    repairs_per_thread_postgres,
    run_cli,
    start_cli,
    wait_for_first_repair,
)
from tests.support.postgres_threads import many_store, saver_on

SHARDS = 8
KILLED = (1, 4, 6)
PACED = ("--min-idle", "0", "--concurrency", "1", "--max-writes-per-second", "5", "--json")


def start_shard(uri: str, k: int) -> subprocess.Popen[str]:
    return start_cli("repair", uri, "--shard", f"{k}/{SHARDS}", *PACED)


async def test_shards_killed_and_restarted_repair_every_broken_head_once(pg_uri: str) -> None:
    with saver_on(pg_uri) as saver:
        await many_store(pg_uri, saver, copies=30)
    listed = run_cli("scan", pg_uri, "--min-idle", "0", "--list")
    broken = {line.split("\t")[0] for line in listed.stdout.splitlines()}
    assert len(broken) > 100

    running = {k: start_shard(pg_uri, k) for k in range(SHARDS)}
    try:
        wait_for_first_repair(lambda: repairs_per_thread_postgres(pg_uri))
        for k in KILLED:
            assert running[k].poll() is None  # still at work
            running[k].kill()  # SIGKILL: no summary, no cleanup, a transaction maybe open
            running[k].communicate(timeout=60)
            running[k] = start_shard(pg_uri, k)  # the pod restarted
        outputs = {k: process.communicate(timeout=180) for k, process in running.items()}
    finally:
        for process in running.values():
            process.kill()
    for k, (stdout, stderr) in outputs.items():
        assert running[k].returncode == 0, stderr
        assert last_json(stdout)["errors"] == []
    assert repairs_per_thread_postgres(pg_uri) == dict.fromkeys(broken, 1)
    after = last_json(run_cli("scan", pg_uri, "--min-idle", "0", "--json").stdout)
    assert after["threads_needing_repair"] == 0
