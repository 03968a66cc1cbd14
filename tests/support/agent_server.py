"""Start a real `langgraph dev` server on a free loopback port, and stop it by its pid."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

APP = Path(__file__).parent / "agent_server_app"
OUR_LINE = "langgraph_checkpoint_repair.server.checkpointer"
RAW_LINE = "./raw_checkpointer.py:checkpointer"
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LOG_COLOR": "false",
}


@dataclass
class Server:
    url: str
    log_file: Path

    @property
    def log(self) -> str:
        return self.log_file.read_text()


def prepare_app(workdir: Path) -> None:
    """Copy the served graph and the raw checkpointer module into a fresh folder."""
    for name in ("graph.py", "raw_checkpointer.py"):
        shutil.copy(APP / name, workdir / name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


GRAPHS = {"before_tools": "./graph.py:before_tools", "agent": "./graph.py:agent"}


@contextlib.contextmanager
def agent_server(
    workdir: Path, checkpointer: str, env: dict[str, str], graphs: dict[str, str] = GRAPHS
) -> Iterator[Server]:
    """`langgraph dev` serving the app in `workdir` with the given checkpointer line."""
    config = {"dependencies": ["."], "graphs": graphs, "checkpointer": {"path": checkpointer}}
    (workdir / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    log_file = workdir / f"server-{port}.log"
    command = [str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser",
               "--no-reload", "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with log_file.open("w") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env={**os.environ, **OFFLINE, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_ready(url, process, log_file)
        yield Server(url, log_file)
    finally:
        stop_by_pid(process)


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], log_file: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log_file.read_text()[-3000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer:\n{log_file.read_text()[-3000:]}")


def stop_by_pid(process: subprocess.Popen[bytes]) -> None:
    """A server the tests started: SIGTERM by its pid, SIGKILL if it lingers."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
