"""Older LangGraph releases beside the newest, each in a virtual environment of its own
(built with uv once, under a lock, where CI has not built it already): 1.2.19, which
makes interrupt ids its own way, 1.2.11, which stored a fork unsealed, and 1.1.10, from
before delta channels. The
two-question application (`two_questions`) is driven as a child process by either
release over one store."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OLDER = "1.2.19"
FORK_UNSEALED = "1.2.11"
"""A release that stored a fork without a snapshot: every read below it replays the
writes of the branch it left (langgraph#8443)."""
BEFORE_DELTA = "1.1.10"
"""The newest LangGraph without delta channels: it reads a delta head's messages as none."""
APP = Path(__file__).with_name("two_questions.py")
NEWEST = sys.executable


def env_of(release: str) -> Path:
    return REPO / f".venv-langgraph-{release}"


def older_python(release: str = OLDER) -> str:
    """The interpreter of the `release` environment, built first if it is not there."""
    env = env_of(release)
    python = env / "bin" / "python"
    with open(REPO / f".venv-langgraph-{release}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test workers build it once
        if not python.exists() or not _has_release(python, release):
            _build(env, release)
    return str(python)


def _has_release(python: Path, release: str) -> bool:
    probe = "import importlib.metadata as m; print(m.version('langgraph'))"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    return found.stdout.strip() == release


def _build(env: Path, release: str) -> None:
    uv = Path(sys.executable).with_name("uv")
    subprocess.run([uv, "venv", "-q", "--allow-existing", "-p", sys.executable, env], check=True)
    python = str(env / "bin" / "python")
    packages = (
        f"langgraph=={release}",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
        "psycopg[binary]",
    )
    subprocess.run([uv, "pip", "install", "-q", "-p", python, *packages], check=True)


def drive(python: str, store: str, thread: str, *argv: str) -> dict[str, Any]:
    """Run the application under `python` over `store` and return what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [python, str(APP), store, thread, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
