"""The rows of a LangGraph.js checkpoint, as `@langchain/langgraph-checkpoint-postgres`
and `@langchain/langgraph-checkpoint-sqlite` write them. Pure: the savers in `saver`
and `sqlite_saver` run the SQL.

A LangGraph.js checkpoint is told from a Python one by its channel versions: LangGraph.js
counts them as integers (`"messages": 7`), LangGraph's savers write strings. Its `ts` is
JavaScript's `toISOString()` and its values are `json` (`values.dumps_js`). On PostgreSQL
the row holds no channel values (each one is a blob, a null too); on SQLite the whole
checkpoint, values included, is one `json` value, and so is its metadata.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from .values import dumps_js

CHECKPOINT_KEYS = ("v", "id", "ts", "versions_seen", "channel_versions")
"""What LangGraph.js keeps in a checkpoint row (its values are blobs)."""

JS_ONLY_SQL = """
SELECT to_regclass('checkpoint_writes') IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = to_regclass('checkpoint_writes') AND attname = 'task_path'
        AND NOT attisdropped
)"""
"""Whether the tables are LangGraph.js's alone: LangGraph's PostgreSQL saver adds
`task_path` to `checkpoint_writes` when it sets them up, LangGraph.js never does."""

_TASK_PATH_COLUMN = re.compile(r"\bcw\.task_path\b")
_TASK_PATH_ORDER = re.compile(r"\border by task_path,\s*", re.IGNORECASE)


def without_task_path(sql: str) -> str:
    """One of LangGraph's PostgreSQL saver's queries for tables without `task_path`:
    every write's path is empty, as LangGraph.js's are (it sorts writes by task and
    index alone)."""
    return _TASK_PATH_ORDER.sub("order by ", _TASK_PATH_COLUMN.sub("''::text", sql))


def is_js_version(version: Any) -> bool:
    return isinstance(version, int) and not isinstance(version, bool)


def is_js_checkpoint(checkpoint: Mapping[str, Any]) -> bool:
    """Whether LangGraph.js wrote this checkpoint (or one it was copied from)."""
    return any(is_js_version(v) for v in (checkpoint.get("channel_versions") or {}).values())


def next_version(current: int | None) -> int:
    """LangGraph.js's next channel version: one more."""
    return 1 if current is None else current + 1


def js_timestamp(ts: str) -> str:
    """A timestamp as JavaScript's `toISOString()` writes it: UTC, milliseconds, `Z`."""
    moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def checkpoint_json(checkpoint: Mapping[str, Any]) -> dict[str, Any]:
    """The checkpoint row's JSON as LangGraph.js writes it."""
    shaped = {key: checkpoint[key] for key in CHECKPOINT_KEYS if key in checkpoint}
    shaped["ts"] = js_timestamp(str(checkpoint["ts"]))
    return shaped


def sqlite_checkpoint_row(
    config: Mapping[str, Any], checkpoint: Mapping[str, Any], metadata: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The parameters of `SQLITE_INSERT_SQL` for a LangGraph.js checkpoint: what
    `SqliteSaver.put` of LangGraph.js writes, values inline, `json` both."""
    configurable = config["configurable"]
    shaped = {**checkpoint_json(checkpoint), "channel_values": checkpoint["channel_values"]}
    return (
        str(configurable["thread_id"]),
        configurable.get("checkpoint_ns", ""),
        checkpoint["id"],
        configurable.get("checkpoint_id"),
        "json",
        dumps_js(shaped),
        dumps_js(dict(metadata)),
    )


SQLITE_INSERT_SQL = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
SQLITE_ROW_TYPE_SQL = (
    "SELECT type FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)


def blob_rows(
    thread_id: str,
    checkpoint_ns: str,
    values: Mapping[str, Any],
    new_versions: Mapping[str, Any],
) -> list[tuple[str, str, str, str, str, bytes | None]]:
    """A blob row for each channel written, `json` as LangGraph.js writes them."""
    return [
        (thread_id, checkpoint_ns, channel, str(version), *_typed(values, channel))
        for channel, version in new_versions.items()
    ]


def _typed(values: Mapping[str, Any], channel: str) -> tuple[str, bytes | None]:
    return ("json", dumps_js(values[channel])) if channel in values else ("empty", None)


def checkpoint_row(
    config: Mapping[str, Any], checkpoint: Mapping[str, Any], metadata: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The parameters of LangGraph's checkpoint upsert for a LangGraph.js checkpoint, its
    two JSON documents still to wrap for psycopg (this module needs no driver)."""
    configurable = config["configurable"]
    return (
        configurable["thread_id"],
        configurable.get("checkpoint_ns", ""),
        checkpoint["id"],
        configurable.get("checkpoint_id"),
        checkpoint_json(checkpoint),
        dict(metadata),
    )


def next_config(config: Mapping[str, Any], checkpoint: Mapping[str, Any]) -> dict[str, Any]:
    configurable = config["configurable"]
    return {
        "configurable": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": checkpoint["id"],
        }
    }
