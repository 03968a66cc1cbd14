"""The LangGraph.js application of `tests/js_app`, driven from the tests with Node, on
PostgreSQL (`@langchain/langgraph-checkpoint-postgres`) or SQLite
(`@langchain/langgraph-checkpoint-sqlite`).

Its packages are pinned by its `package-lock.json` and installed into its own
`node_modules` (ignored by git) by `npm ci`: `.ci/run` does it before the suite, and
`installed()` does it on a machine where it was not done yet.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import psycopg
import pytest

APP = Path(__file__).resolve().parents[1] / "js_app"
INSTALLED_MARKS = [
    APP / "node_modules" / "@langchain" / "langgraph-checkpoint-postgres",
    APP / "node_modules" / "@langchain" / "langgraph-checkpoint-sqlite",
    APP / "node_modules" / "better-sqlite3" / "build" / "Release" / "better_sqlite3.node",
]
"""What `npm ci` leaves: a folder installed before the SQLite saver was pinned lacks some."""
STORES = ["postgres", "sqlite"]


def installed() -> None:
    """Make sure the application's packages are installed; skip where Node or npm is
    absent, fail where the install fails."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: the LangGraph.js tests need Node 20")
    if all(mark.exists() for mark in INSTALLED_MARKS):
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
    """One LangGraph.js application on one store (a PostgreSQL schema or a SQLite file):
    each call is one Node process. `target` names the store as the command does."""

    target: str
    env: dict[str, str]

    @classmethod
    def on(cls, pg_uri: str) -> JsApp:
        uri, schema = split_uri(pg_uri)
        return cls(pg_uri, {"JS_APP_POSTGRES_URI": uri, "JS_APP_SCHEMA": schema})

    @classmethod
    def on_file(cls, path: Path) -> JsApp:
        return cls(f"sqlite:///{path}", {"JS_APP_SQLITE_PATH": str(path)})

    @classmethod
    def on_redis(cls, url: str) -> JsApp:
        return cls(url, {"JS_APP_REDIS_URL": url})

    @property
    def on_sqlite(self) -> bool:
        return self.target.startswith("sqlite:///")

    def run(self, *argv: str) -> dict[str, Any]:
        env = {**os.environ, **self.env}
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

    def delta_turn(self, thread_id: str, text: str = "") -> dict[str, Any]:
        """A turn of the chat graph over a delta `messages` channel; none, to read it."""
        return self.run("delta", thread_id, *([text] if text else []))

    def regenerate(self, thread_id: str) -> dict[str, Any]:
        """The chat graph's last answer made again from the checkpoint before it."""
        return self.run("regenerate", thread_id)

    def brick(self, thread_id: str) -> dict[str, Any]:
        """A thread interrupted before its tools, then a new user message: the turn fails
        the provider's pairing rule, and every later one does too."""
        asked = self.turn(thread_id, "weather in Paris")
        assert asked["ok"] and asked["next"] == ["tools"], asked
        failed = self.turn(thread_id, "never mind, hello")
        assert not failed["ok"] and "tool_call_id" in failed["error"], failed
        return failed


@dataclass(frozen=True)
class StoredRows:
    """What a LangGraph.js store holds, as stored: to prove what was (not) written."""

    checkpoints: list[tuple[str, str, dict[str, Any], dict[str, Any]]]
    """(thread, checkpoint id, checkpoint JSON, metadata JSON), oldest first per thread."""
    blobs: list[tuple[str, str, str, str, bytes | None]]
    """(thread, channel, version, type, blob)."""
    writes: list[tuple[str, str, str, str | None]]
    """(thread, checkpoint id, channel, type)."""

    def repairs(self, thread_id: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        return [
            (cid, cp, meta)
            for thread, cid, cp, meta in self.checkpoints
            if thread == thread_id and "langgraph_repair_run" in meta
        ]

    def head(self, thread_id: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
        return max((c for c in self.checkpoints if c[0] == thread_id), key=lambda c: c[1])[1:]

    def blob(self, thread_id: str, channel: str, version: Any) -> tuple[str, bytes | None]:
        found = [b for b in self.blobs if b[:3] == (thread_id, channel, str(version))]
        assert len(found) == 1, found
        return found[0][3], found[0][4]


def stored_rows(target: str) -> StoredRows:
    """What the store `target` holds. A SQLite store has no blobs: each checkpoint row,
    values inline, is listed under `blobs` with its type, as `(checkpoint)`."""
    if target.startswith("sqlite:///"):
        return _sqlite_rows(target.removeprefix("sqlite:///"))
    with psycopg.connect(target) as conn:
        checkpoints = conn.execute(
            "SELECT thread_id, checkpoint_id, checkpoint, metadata FROM checkpoints "
            "ORDER BY thread_id, checkpoint_id"
        ).fetchall()
        blobs = conn.execute(
            "SELECT thread_id, channel, version, type, blob FROM checkpoint_blobs "
            "ORDER BY thread_id, channel, version"
        ).fetchall()
        writes = conn.execute(
            "SELECT thread_id, checkpoint_id, channel, type FROM checkpoint_writes "
            "ORDER BY thread_id, checkpoint_id, task_id, idx"
        ).fetchall()
    return StoredRows(
        checkpoints,
        [(t, c, v, ty, None if b is None else bytes(b)) for t, c, v, ty, b in blobs],
        writes,
    )


def _sqlite_rows(path: str) -> StoredRows:
    with sqlite3.connect(path) as conn:
        checkpoints = conn.execute(
            "SELECT thread_id, checkpoint_id, type, checkpoint, metadata FROM checkpoints "
            "ORDER BY thread_id, checkpoint_id"
        ).fetchall()
        writes = conn.execute(
            "SELECT thread_id, checkpoint_id, channel, type FROM writes "
            "ORDER BY thread_id, checkpoint_id, task_id, idx"
        ).fetchall()
    return StoredRows(
        [(t, c, _json_of(ty, cp), _json_of(ty, meta)) for t, c, ty, cp, meta in checkpoints],
        [(t, "(checkpoint)", c, ty, bytes(cp)) for t, c, ty, cp, _ in checkpoints],
        writes,
    )


def _json_of(type_: str, stored: bytes | str) -> dict[str, Any]:
    """A SQLite row's JSON; a row of another type reads as `{"type": ...}` with no
    versions, which `assert_js_format_only` refuses by its type."""
    if type_ != "json":
        return {"type": type_, "channel_versions": {}}
    value: dict[str, Any] = json.loads(stored)
    return value


def assert_js_format_only(rows: StoredRows) -> None:
    """Every value is one LangGraph.js reads (`json`, or `empty` for none), every
    checkpoint counts its versions as integers: nothing of another format was written."""
    assert {b[3] for b in rows.blobs} <= {"json", "empty"}, {b[3] for b in rows.blobs}
    assert {w[3] for w in rows.writes} <= {"json"}
    for _, _, checkpoint, _ in rows.checkpoints:
        versions = checkpoint["channel_versions"].values()
        assert all(type(v) is int for v in versions), checkpoint


def tag_head(target: str, thread_id: str, keys: dict[str, Any]) -> None:
    """Add `keys` to the metadata of the thread's head, as stored (a JSON blob on SQLite,
    `jsonb` on PostgreSQL): the keys a server or an application keeps on a thread's
    checkpoints, which LangGraph.js's own runs do not add."""
    head_id, _, metadata = stored_rows(target).head(thread_id)
    tagged = json.dumps({**metadata, **keys})
    if target.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(target.removeprefix("sqlite:///"))) as conn:
            conn.execute(
                "UPDATE checkpoints SET metadata = ? WHERE thread_id = ? AND checkpoint_id = ?",
                (tagged.encode(), thread_id, head_id),
            )
            conn.commit()
        return
    with psycopg.connect(target) as conn:
        conn.execute(
            "UPDATE checkpoints SET metadata = %s::jsonb "
            "WHERE thread_id = %s AND checkpoint_id = %s",
            (tagged, thread_id, head_id),
        )
