"""LangGraph 1.2.19 beside the newest: its own virtual environment (built with uv once,
under a lock, where CI has not built it already), and the two-question application
(`two_questions`) driven as a child process by either release over one store."""

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
ENV = REPO / f".venv-langgraph-{OLDER}"
PACKAGES = (
    f"langgraph=={OLDER}",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "psycopg[binary]",
)
APP = Path(__file__).with_name("two_questions.py")
NEWEST = sys.executable


def older_python() -> str:
    """The interpreter of the 1.2.19 environment, built first if it is not there."""
    python = ENV / "bin" / "python"
    with open(REPO / f".venv-langgraph-{OLDER}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test workers build it once
        if not python.exists() or not _has_release(python):
            _build()
    return str(python)


def _has_release(python: Path) -> bool:
    probe = "import importlib.metadata as m; print(m.version('langgraph'))"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    return found.stdout.strip() == OLDER


def _build() -> None:
    uv = Path(sys.executable).with_name("uv")
    subprocess.run([uv, "venv", "-q", "--allow-existing", "-p", sys.executable, ENV], check=True)
    python = str(ENV / "bin" / "python")
    subprocess.run([uv, "pip", "install", "-q", "-p", python, *PACKAGES], check=True)


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
