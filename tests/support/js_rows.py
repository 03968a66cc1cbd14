"""A LangGraph.js store written row by row, for pages that run without Node: the tables
as `@langchain/langgraph-checkpoint-postgres` 1.0.5 (or `-sqlite` 1.0.4) creates them,
and a thread's head as LangGraph.js 1.7.3 wrote it (tests/js_app; `tests/js` checks the
application reads both)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

MIGRATIONS = [
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT,
        checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{}',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""",
    """CREATE TABLE IF NOT EXISTS checkpoint_blobs (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL,
        version TEXT NOT NULL, type TEXT NOT NULL, blob BYTEA,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version))""",
    """CREATE TABLE IF NOT EXISTS checkpoint_writes (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL,
        channel TEXT NOT NULL, type TEXT, blob BYTEA NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""",
    "ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP not null",
]


def _message(kind: str, **kwargs: Any) -> dict[str, Any]:
    fields = {"additional_kwargs": {}, "response_metadata": {}, **kwargs}
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", kind],
        "kwargs": fields,
    }


BRICKED_HISTORY = [
    _message("HumanMessage", content="weather in Paris", id="h-1"),
    _message(
        "AIMessage",
        content="",
        id="ai-0",
        tool_calls=[
            {"id": "call_0", "name": "get_weather", "args": {"city": "Paris"}, "type": "tool_call"}
        ],
        invalid_tool_calls=[],
        name={"lc": 2, "type": "undefined"},
    ),
    _message("HumanMessage", content="never mind, hello", id="h-2"),
]
HEAD = {
    "v": 4,
    "ts": "2026-01-05T09:30:00.000Z",
    "versions_seen": {
        "agent": {"branch:to:agent": 2},
        "tools": {"branch:to:tools": 3},
        "__input__": {},
        "__start__": {"__start__": 4},
    },
    "channel_versions": {"messages": 5, "__start__": 5, "branch:to:agent": 5, "branch:to:tools": 4},
}
HEAD_BLOBS = [
    ("messages", "5", "json", json.dumps(BRICKED_HISTORY, separators=(",", ":")).encode()),
    ("__start__", "5", "empty", None),
    ("branch:to:agent", "5", "json", b"null"),
    ("branch:to:tools", "4", "empty", None),
]


def langgraph_js_store(uri: str, thread_ids: list[str]) -> None:
    """LangGraph.js's tables, each thread's head interrupted before its tools and then
    sent a new message: the provider refuses its next turn."""
    with psycopg.connect(uri, autocommit=True) as conn:
        for statement in MIGRATIONS:
            conn.execute(statement)
        for v in range(len(MIGRATIONS)):
            conn.execute(
                "INSERT INTO checkpoint_migrations (v) VALUES (%s) ON CONFLICT DO NOTHING", (v,)
            )
        for n, thread_id in enumerate(thread_ids):
            checkpoint_id = f"1f0ea180-91ba-6f40-8003-{n:012x}"
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_id, parent_checkpoint_id, "
                "checkpoint, metadata) VALUES (%s, %s, NULL, %s, %s)",
                (
                    thread_id,
                    checkpoint_id,
                    Jsonb({**HEAD, "id": checkpoint_id}),
                    Jsonb({"step": 3, "source": "loop", "parents": {}}),
                ),
            )
            for channel, version, type_, blob in HEAD_BLOBS:
                conn.execute(
                    "INSERT INTO checkpoint_blobs (thread_id, channel, version, type, blob) "
                    "VALUES (%s, %s, %s, %s, %s)",
                    (thread_id, channel, version, type_, blob),
                )


SQLITE_TABLES = [
    """CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT,
        checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""",
    """CREATE TABLE IF NOT EXISTS writes (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL,
        channel TEXT NOT NULL, type TEXT, value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""",
]
SQLITE_VALUES = {"messages": BRICKED_HISTORY, "branch:to:agent": None}
"""The head's values, inline in its row: a channel without one is not there."""


def langgraph_js_sqlite_store(path: Path, thread_ids: list[str]) -> None:
    """The same threads in a file as LangGraph.js's SQLite saver writes it: one `json`
    row per checkpoint, values inline, metadata `json` too."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        for statement in SQLITE_TABLES:
            conn.execute(statement)
        for n, thread_id in enumerate(thread_ids):
            checkpoint_id = f"1f0ea180-91ba-6f40-8003-{n:012x}"
            checkpoint = {**HEAD, "id": checkpoint_id, "channel_values": SQLITE_VALUES}
            metadata = {"source": "loop", "step": 3, "parents": {}}
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, '', ?, NULL, "
                "'json', ?, ?)",
                (thread_id, checkpoint_id, _json(checkpoint), _json(metadata)),
            )


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
