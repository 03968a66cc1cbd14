"""The archive a Redis prune keeps on the store's own server, and undo and forget of
it, as steps (`prune_base`).

Each thread of a run has three hashes: its deleted keys' DUMPs, each key's kind and
expiry, and the parent pointers the prune cleared. A run has a record and the set of
its threads. Their keys are named `langgraph_repair:*`, which no saver reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ...retention.outcome import Deleted
from .steps import Command, Commit, Read, Steps, Watch, parsed, text

PARENT = "$.parent_checkpoint_id"
CLEARED = '""'
"""A parent pointer cleared, as the saver stores a first checkpoint's."""
TABLE_OF = {"checkpoint": "checkpoints", "pointer": "checkpoints", "write": "writes",
            "registry": "writes", "blob": "blobs"}  # fmt: skip
"""Which of a report's tables each kind of key is weighed in."""
Kind = Literal["checkpoint", "pointer", "write", "registry", "blob"]
ROWS = ("checkpoint", "write", "blob")
"""The kinds of key that count as rows: documents a saver loads."""


@dataclass(frozen=True)
class Doomed:
    """A key a prune deletes, what kind it is, its DUMP and its expiry (ms since the
    epoch; 0 when it has none)."""

    key: str
    kind: Kind
    dump: bytes | None = None
    expires_at: int = 0


def run_key(run_id: str) -> str:
    return f"langgraph_repair:prune_run:{run_id}"


def threads_key(run_id: str) -> str:
    return f"langgraph_repair:prune_run:{run_id}:threads"


def archive_keys(run_id: str, thread_id: str) -> tuple[str, str, str]:
    """One thread's archive of one run: the keys' DUMPs, their kind and expiry, and the
    parent pointers the prune cleared."""
    return tuple(  # type: ignore[return-value]
        f"langgraph_repair:pruned_{part}:{run_id}:{thread_id}"
        for part in ("dumps", "kinds", "parents")
    )


def archived(
    run_id: str, thread_id: str, doomed: Sequence[Doomed], orphans: Mapping[str, str]
) -> list[Command]:
    dumps, kinds, parents = archive_keys(run_id, thread_id)
    commands: list[Command] = [
        ("hset", dumps, None, None, {d.key: d.dump for d in doomed}),
        ("hset", kinds, None, None, {d.key: f"{d.kind} {d.expires_at}" for d in doomed}),
        ("sadd", threads_key(run_id), thread_id),
    ]
    if orphans:
        commands.append(("hset", parents, None, None, dict(orphans)))
    if doomed and all(d.expires_at for d in doomed):
        last = max(d.expires_at for d in doomed)
        commands += [("pexpireat", key, last) for key in (dumps, kinds, parents)]
    return commands


def restore_steps(run_id: str, thread_id: str) -> Steps[Deleted | None]:
    """One thread's archived keys RESTOREd (a key held again is left), each parent
    pointer the prune cleared put back where it is still cleared, the archive dropped;
    None when a cleared pointer changed meanwhile (run it again)."""
    archive = archive_keys(run_id, thread_id)
    dumps, kinds, parents = yield Read([("hgetall", key) for key in archive])
    orphans = {text(k): text(v) for k, v in parents.items()}
    if orphans:
        yield Watch(list(orphans))
    now = yield Read([("execute_command", "JSON.GET", key, PARENT) for key in orphans])
    restored: list[tuple[Kind, Command]] = []
    for key, dump in dumps.items():
        kind, at = text(kinds.get(key, b"checkpoint 0")).split()
        restored.append((kind, ("restore", text(key), int(at), dump, False, True)))  # type: ignore[arg-type]
    put_back = [
        ("execute_command", "JSON.SET", key, PARENT, json.dumps(was))
        for (key, was), current in zip(orphans.items(), now, strict=True)
        if parsed(current) in ([""], [None])  # cleared as RedisSaver, as LangGraph.js
    ]
    done = [("delete", *archive), ("srem", threads_key(run_id), thread_id)]
    replies = yield Commit([command for _, command in restored] + put_back + done)
    if replies is None:
        return None
    counted = Deleted()
    for (kind, _), reply in zip(restored, replies, strict=False):
        if kind in ROWS and not isinstance(reply, Exception):
            counted.add(TABLE_OF[kind], 1, 0)
    return counted


def forget_steps(run_id: str) -> Steps[int]:
    """A run's archive dropped (its record kept): the archived documents it held."""
    (members,) = yield Read([("smembers", threads_key(run_id))])
    threads = sorted(text(member) for member in members)
    kinds = yield Read([("hvals", archive_keys(run_id, t)[1]) for t in threads])
    dropped = sum(text(v).split()[0] in ROWS for found in kinds for v in found)
    archives = [key for t in threads for key in archive_keys(run_id, t)]
    yield Commit([*(("delete", key) for key in archives), ("delete", threads_key(run_id))])
    return dropped


def run_threads_steps(run_id: str) -> Steps[list[str] | None]:
    """The threads a prune run archived keys of; None when the run is no prune of this
    store."""
    exists, members = yield Read([("exists", run_key(run_id)), ("smembers", threads_key(run_id))])
    return sorted(text(m) for m in members) if exists else None


def run_record(run_id: str, fields: Mapping[str, str]) -> Steps[None]:
    yield Commit([("hset", run_key(run_id), None, None, dict(fields))])
