"""A connection cut in the middle of a page (by a relay the test runs on 127.0.0.1):
the run stops within seconds with the summary so far and exit 1, the rerun finishes,
and no head is repaired twice. Real child processes, a real PostgreSQL."""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.support.cli_runs import (
    last_json,
    repairs_per_thread_postgres,
    run_cli,
    start_cli,
    wait_for_first_repair,
)
from tests.support.many_threads import multiply
from tests.support.postgres_threads import BROKEN, CLEAN, put_chain, saver_on
from tests.support.tcp_relay import Relay

LOST = "langgraph-repair: error: lost the database: "
BRICKED = [f"zz-bricked-{n}" for n in range(6)]  # the newest ids: the first page
CLEAN_COPIES = 3000  # three more pages of 1,000 heads


async def test_a_connection_cut_mid_page_stops_the_run_and_the_rerun_finishes(
    pg_uri: str,
) -> None:
    with saver_on(pg_uri) as saver:
        for thread_id in BRICKED:
            put_chain(saver, thread_id, "", BROKEN)
        put_chain(saver, "clean", "", CLEAN)
    multiply(pg_uri, ["clean"], CLEAN_COPIES)
    server = urlsplit(pg_uri)
    relay = Relay((server.hostname or "127.0.0.1", server.port or 5432))
    try:
        through = relay.uri(pg_uri)
        slow = ("--min-idle", "0", "--concurrency", "1", "--max-writes-per-second", "2")
        process = start_cli("repair", through, *slow, "--json")
        try:
            wait_for_first_repair(lambda: repairs_per_thread_postgres(pg_uri))
            relay.arm()  # the next page read is cut after 100 of its rows
            stdout, stderr = process.communicate(timeout=60)  # a hang fails the test here
        finally:
            process.kill()
        assert relay.cut.is_set()
        assert process.returncode == 1, stderr
        errors = [line for line in stderr.splitlines() if line.startswith("langgraph-repair:")]
        assert len(errors) == 1 and errors[0].startswith(LOST), stderr
        assert errors[0].endswith("repairs; run the command again to finish)")
        assert "Traceback" not in stderr
        summary = last_json(stdout)
        assert summary["checkpoints_written"] >= 1 and summary["errors"] == []
        assert set(repairs_per_thread_postgres(pg_uri).values()) == {1}

        relay.armed.clear()
        finish = run_cli("repair", through, "--min-idle", "0", "--json")
        assert finish.returncode == 0, finish.stderr
        finished = last_json(finish.stdout)
        assert finished["threads_repaired"] == len(BRICKED) - summary["threads_repaired"]
    finally:
        relay.close()
    assert repairs_per_thread_postgres(pg_uri) == dict.fromkeys(BRICKED, 1)
