"""What the Redis tests read of a server's keyspace, and the command they run on it."""

from __future__ import annotations

from typing import Any

import redis

from tests.support.cli_runs import last_json, run_cli


def dumps(url: str) -> dict[bytes, bytes]:
    """Every key with its value as the server serializes it (DUMP)."""
    with redis.Redis.from_url(url) as client:
        return {key: client.dump(key) for key in client.scan_iter(count=1000)}


def ttls(url: str) -> dict[bytes, int]:
    """Every key's time left to live, in ms (-1: none)."""
    with redis.Redis.from_url(url) as client:
        return {key: client.pttl(key) for key in client.scan_iter(count=1000)}


def command(*argv: str) -> tuple[int, dict[str, Any], str]:
    """`langgraph-repair` in a child process: its exit code, its JSON summary (with
    `--json`) and its standard error."""
    done = run_cli(*argv)
    return done.returncode, last_json(done.stdout) if "--json" in argv else {}, done.stderr
