"""LangGraph.js's Redis layout (`@langchain/langgraph-checkpoint-redis`), without I/O.

Each checkpoint is a RedisJSON document `checkpoint:{thread}:{ns}:{id}` (the namespace as
given, so `checkpoint:t1::{id}` at the root) holding the values of the channels it
updated; every channel version also has a document `checkpoint_blob:{thread}:{ns}:
{channel}:{version}`, from which a checkpoint loads the channels it does not hold. Each
pending write is `checkpoint_write:{thread}:{ns}:{id}:{task}:{idx}`, listed in the
sorted set `write_keys_zset:{thread}:{ns}:{id}`. Values are LangChain.js's JSON. The
saver finds a namespace's head by sorting its checkpoint keys: a repair's id sorts
after the head's, so it is the head LangGraph.js loads next.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple

from ...js.rows import checkpoint_json
from ...js.values import dumps_js, loads_js
from .base import HEAD_FIELDS

EMPTY = "__empty__"
"""How a document stores the root namespace (its key holds it as given: empty)."""
IDENTITY = HEAD_FIELDS
"""A document's identity fields, as RedisSaver's documents name them too."""


def _schema(name: str, prefix: str, tags: Sequence[str]) -> dict[str, Any]:
    fields = [{"name": tag, "type": "tag"} for tag in tags]
    return {"index": {"name": name, "prefix": prefix, "storage_type": "json"}, "fields": fields}


SCHEMAS = {
    "checkpoints": _schema("checkpoints", "checkpoint:", ["thread_id", "checkpoint_ns",
                                                          "checkpoint_id"]),
    "writes": _schema("checkpoint_writes", "checkpoint_write:", ["thread_id", "checkpoint_ns",
                                                                "checkpoint_id", "channel"]),
    "blobs": _schema("checkpoint_blobs", "checkpoint_blob:", ["thread_id", "checkpoint_ns",
                                                             "channel", "version"]),
}  # fmt: skip
"""LangGraph.js's RediSearch indexes, as far as a search by thread reads them (the
application's saver creates them; nothing here does)."""


def checkpoint_key(thread_id: str, ns: str, checkpoint_id: str) -> str:
    return f"checkpoint:{thread_id}:{ns}:{checkpoint_id}"


def blob_key(thread_id: str, ns: str, channel: str, version: Any) -> str:
    return f"checkpoint_blob:{thread_id}:{ns}:{channel}:{version}"


def write_key(thread_id: str, ns: str, checkpoint_id: str, task_id: str, idx: int) -> str:
    return f"checkpoint_write:{thread_id}:{ns}:{checkpoint_id}:{task_id}:{idx}"


def zset_key(thread_id: str, ns: str, checkpoint_id: str) -> str:
    return f"write_keys_zset:{thread_id}:{ns}:{checkpoint_id}"


def _glob(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def namespace_pattern(thread_id: str, ns: str) -> str:
    """The pattern LangGraph.js lists a namespace's checkpoint keys by."""
    return f"checkpoint:{_glob(thread_id)}:{_glob(ns)}:*"


def writes_pattern(thread_id: str, ns: str, checkpoint_id: str) -> str:
    return f"checkpoint_write:{_glob(thread_id)}:{_glob(ns)}:{_glob(checkpoint_id)}:*"


def thread_pattern(thread_id: str | None) -> str:
    """Every checkpoint key, or one thread's (each namespace's)."""
    return "checkpoint:*" if thread_id is None else f"checkpoint:{_glob(thread_id)}:*"


def stored_ns(value: Any) -> str:
    """A namespace as a document stores it, the root's sentinel undone."""
    return "" if value == EMPTY or value is None else str(value)


def identity(fields: Any) -> tuple[str, str, str] | None:
    """(thread, namespace, checkpoint id) from a document's identity fields (JSON.GET of
    `IDENTITY`); None for a document that is gone or odd."""
    if not isinstance(fields, Mapping):
        return None
    found = [(fields.get(path) or [None])[0] for path in IDENTITY]
    if not all(isinstance(value, str) for value in found):
        return None
    thread_id, ns, checkpoint_id = found
    return thread_id, stored_ns(ns), checkpoint_id


def _revived(value: Any) -> Any:
    """A stored JSON value with its LangChain.js messages built (as the saver's serde)."""
    return loads_js(json.dumps(value).encode())[0]


def plain_js(value: Any) -> Any:
    """`value` as LangChain.js JSON, ready for a document (`values.dumps_js`)."""
    return json.loads(dumps_js(value))


def loaded(
    doc: Mapping[str, Any], blobs: Mapping[str, Any], writes: Sequence[Mapping[str, Any]]
) -> CheckpointTuple:
    """A checkpoint as LangGraph.js loads it: its own values, each other channel from
    the blob of its version (`blobs`, by channel), its pending writes in the order they
    were written."""
    ns = stored_ns(doc.get("checkpoint_ns"))
    checkpoint = _revived(doc["checkpoint"])
    values = checkpoint.setdefault("channel_values", {})
    for channel, blob in blobs.items():
        if channel not in values and isinstance(blob, Mapping) and "value" in blob:
            values[channel] = _revived(blob["value"])
    ordered = sorted(writes, key=lambda w: w.get("global_idx") or 0)
    pending = [
        (str(w.get("task_id")), str(w.get("channel")), _revived(w.get("value"))) for w in ordered
    ]
    where = {"thread_id": doc["thread_id"], "checkpoint_ns": ns}
    parent = doc.get("parent_checkpoint_id")
    return CheckpointTuple(
        config={"configurable": {**where, "checkpoint_id": doc["checkpoint_id"]}},
        checkpoint=checkpoint,
        metadata=_revived(doc.get("metadata") or {}),
        parent_config={"configurable": {**where, "checkpoint_id": parent}} if parent else None,
        pending_writes=pending,
    )


def missing_blobs(doc: Mapping[str, Any], thread_id: str, ns: str) -> dict[str, str]:
    """The blob key of each channel the document names but does not hold."""
    checkpoint = doc.get("checkpoint") or {}
    held = checkpoint.get("channel_values") or {}
    return {
        channel: blob_key(thread_id, ns, channel, version)
        for channel, version in (checkpoint.get("channel_versions") or {}).items()
        if channel not in held
    }


def checkpoint_documents(
    config: Mapping[str, Any],
    checkpoint: Mapping[str, Any],
    metadata: Mapping[str, Any],
    new_versions: Mapping[str, Any],
    has_writes: bool,
) -> list[tuple[str, dict[str, Any]]]:
    """The documents LangGraph.js's `put` stores: a blob for each channel written, then
    the checkpoint, holding those channels' values."""
    where = config["configurable"]
    thread_id, ns = str(where["thread_id"]), str(where.get("checkpoint_ns", ""))
    values = checkpoint.get("channel_values") or {}
    written = {c: plain_js(values[c]) for c in new_versions if c in values}
    stored = {**checkpoint_json(checkpoint), "channel_values": written}
    documents = [
        (
            blob_key(thread_id, ns, channel, version),
            {
                **_named(thread_id, ns, checkpoint["id"]),
                "channel": channel,
                "version": str(version),
                "type": "json",
                "value": written[channel],
            },
        )
        for channel, version in new_versions.items()
        if channel in written
    ]
    plain_metadata = plain_js(dict(metadata))
    doc = {
        **_named(thread_id, ns, checkpoint["id"]),
        "parent_checkpoint_id": where.get("checkpoint_id") or None,
        "checkpoint": stored,
        "metadata": plain_metadata,
        "checkpoint_ts": int(time.time() * 1000),
        "has_writes": "true" if has_writes else "false",
        **{k: plain_metadata[k] for k in ("source", "step") if k in plain_metadata},
    }
    documents.append((checkpoint_key(thread_id, ns, checkpoint["id"]), doc))
    return documents


def _blob(
    where: Mapping[str, Any],
    checkpoint: Mapping[str, Any],
    channel: str,
    version: Any,
    written: Mapping[str, Any],
) -> dict[str, Any]:
    named = _named(str(where["thread_id"]), str(where.get("checkpoint_ns", "")), checkpoint["id"])
    value = written[channel]
    return {**named, "channel": channel, "version": str(version), "type": "json", "value": value}


def _named(thread_id: str, ns: str, checkpoint_id: str) -> dict[str, str]:
    return {"thread_id": thread_id, "checkpoint_ns": ns or EMPTY, "checkpoint_id": checkpoint_id}


def write_documents(
    config: Mapping[str, Any], writes: Iterable[tuple[str, Any]], task_id: str
) -> list[tuple[str, dict[str, Any], float]]:
    """The documents LangGraph.js's `putWrites` stores, each with its score in the sorted
    set of the checkpoint's write keys."""
    where = config["configurable"]
    thread_id, ns = str(where["thread_id"]), str(where.get("checkpoint_ns", ""))
    checkpoint_id = str(where["checkpoint_id"])
    base = time.perf_counter() * 1e6
    found = []
    for n, (channel, value) in enumerate(writes):
        idx = WRITES_IDX_MAP.get(channel, n)
        doc = {
            "thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id,
            "task_id": task_id, "idx": idx, "channel": channel,
            "type": "string" if isinstance(value, (str, int, float, bool)) else "json",
            "value": plain_js(value), "timestamp": base, "global_idx": base + n,
        }  # fmt: skip
        found.append((write_key(thread_id, ns, checkpoint_id, task_id, idx), doc, base + n))
    return found
