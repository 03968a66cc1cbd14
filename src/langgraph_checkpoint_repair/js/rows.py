"""The rows of a LangGraph.js checkpoint, as `@langchain/langgraph-checkpoint-postgres`
and `@langchain/langgraph-checkpoint-sqlite` write them. Pure: the savers that run the
SQL are the store drivers' (`stores.postgres.js_saver`, `stores.sqlite.js_saver`).

A LangGraph.js checkpoint is told from a Python one by its channel versions: LangGraph.js
counts them as integers (`"messages": 7`), LangGraph's savers write strings. Its `ts` is
JavaScript's `toISOString()` and its values are `json` (`values.dumps_js`). On PostgreSQL
the row holds no channel values (each one is a blob, a null too); on SQLite the whole
checkpoint, values included, is one `json` value, and so is its metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from .values import dumps_js

CHECKPOINT_KEYS = ("v", "id", "ts", "versions_seen", "channel_versions")
"""What LangGraph.js keeps in a checkpoint row (its values are blobs)."""


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
    """The parameters of the SQLite checkpoint insert (`stores.sqlite.js_saver`) for a
    LangGraph.js checkpoint: what `SqliteSaver.put` of LangGraph.js writes, values
    inline, `json` both."""
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
