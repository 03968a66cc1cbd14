"""A PostgreSQL cluster a test owns: its own data directory and port on 127.0.0.1,
made, started, restarted and stopped with PostgreSQL's own tools (initdb, pg_ctl),
never the shared server."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def server_tool(name: str) -> str:
    """`initdb` / `pg_ctl`: on PATH, or in the newest of Debian's version folders."""
    found = shutil.which(name) or max(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), default="")
    if not found:
        pytest.skip(f"{name} is not installed: no PostgreSQL cluster of the test's own")
    return found


def as_server_user() -> list[str]:
    """PostgreSQL refuses to run as root: as root, run its tools as `postgres`."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    data: Path
    port: int

    @property
    def uri(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *argv: str) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        command = [*as_server_user(), server_tool("pg_ctl"), "-D", str(self.data), "-w"]
        subprocess.run(
            [*command, "-o", options, "-l", str(self.data / "server.log"), *argv],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def restart(self, mode: str) -> None:
        """Stop (`fast`: sessions ended; `immediate`: a crash, recovery on start) and start."""
        self.pg_ctl("restart", "-m", mode)


@contextlib.contextmanager
def own_cluster() -> Iterator[Cluster]:
    """A fresh cluster, started; stopped and deleted afterwards."""
    data = Path(tempfile.mkdtemp(prefix="lgr-cluster-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    initdb = [server_tool("initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    subprocess.run(
        [*as_server_user(), *initdb, "--no-sync", "--no-instructions"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    cluster = Cluster(data, free_port())
    cluster.pg_ctl("start")
    try:
        yield cluster
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            cluster.pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(data, ignore_errors=True)
