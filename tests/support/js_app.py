"""The LangGraph.js application of `tests/js_app`, driven from the tests with Node.

Its packages are pinned by its `package-lock.json` and installed into its own
`node_modules` (ignored by git) by `npm ci`: `.ci/run` does it before the suite, and
`installed()` does it on a machine where it was not done yet.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest

APP = Path(__file__).resolve().parents[1] / "js_app"
INSTALLED_MARK = APP / "node_modules" / "@langchain" / "langgraph-checkpoint-postgres"


def installed() -> None:
    """Make sure the application's packages are installed; skip where Node or npm is
    absent, fail where the install fails."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: the LangGraph.js tests need Node 20")
    if INSTALLED_MARK.is_dir():
        return
    done = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"],
        cwd=APP,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.fail(f"npm ci failed in {APP.name}: {done.stderr.strip()[-2000:]}")


def split_uri(uri: str) -> tuple[str, str]:
    """A test's URI (`conftest.pg_uri`: its schema as the search_path) as the server's
    URI and the schema, which LangGraph.js's saver takes as an option."""
    parts = urlsplit(uri)
    query = parse_qs(parts.query)
    options = query.pop("options", [""])[0]
    schema = options.partition("search_path=")[2].split()[0] if "search_path=" in options else ""
    base = urlunsplit(parts._replace(query=urlencode(query, doseq=True)))
    return base, schema or "public"


@dataclass(frozen=True)
class JsApp:
    """One LangGraph.js application on one schema: each call is one Node process."""

    uri: str
    schema: str

    @classmethod
    def on(cls, pg_uri: str) -> JsApp:
        return cls(*split_uri(pg_uri))

    def run(self, *argv: str) -> dict[str, Any]:
        env = {**os.environ, "JS_APP_POSTGRES_URI": self.uri, "JS_APP_SCHEMA": self.schema}
        command = ["node", "app.mjs", *argv]
        done = subprocess.run(command, cwd=APP, env=env, capture_output=True, text=True, timeout=99)
        lines = done.stdout.strip().splitlines()
        if not lines:
            raise AssertionError(f"the application printed nothing: {done.stderr.strip()}")
        outcome: dict[str, Any] = json.loads(lines[-1])
        assert outcome["ok"] == (done.returncode == 0), done.stderr
        return outcome

    def turn(self, thread_id: str, text: str) -> dict[str, Any]:
        return self.run("turn", thread_id, text)

    def resume(self, thread_id: str) -> dict[str, Any]:
        return self.run("resume", thread_id)

    def state(self, thread_id: str) -> dict[str, Any]:
        return self.run("state", thread_id)

    def brick(self, thread_id: str) -> dict[str, Any]:
        """A thread interrupted before its tools, then a new user message: the turn fails
        the provider's pairing rule, and every later one does too."""
        asked = self.turn(thread_id, "weather in Paris")
        assert asked["ok"] and asked["next"] == ["tools"], asked
        failed = self.turn(thread_id, "never mind, hello")
        assert not failed["ok"] and "tool_call_id" in failed["error"], failed
        return failed
