"""A repair of a shallow Redis store, and its undo, as steps (`steps`).

ShallowRedisSaver keeps one document per (thread, namespace) and replaces it at every
step, so a repair cannot append: it replaces the head's document, in one MULTI/EXEC
under WATCH (an application that wrote meanwhile keeps its write, and the thread is
left to it). The document's and the write registry's bytes go first, as the server's
DUMP with their expiry, into an archive on the same server (`langgraph_repair:*`), so
undo RESTOREs them byte for byte, time to live included, while the document is still
the repair's; the repair's own writes are then deleted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.redis.util import to_storage_safe_id, to_storage_safe_str
from redisvl.query import FilterQuery
from redisvl.query.filter import Tag

from ...decisions.races import WriteOutcome
from .base import PAGE
from .steps import Command, Commit, Read, Search, Steps, Watch, parsed, text

ID = "$.checkpoint_id"


def archive_keys(run_id: str, thread_id: str) -> tuple[str, str]:
    """A repair run's archive of one thread: each replaced key's DUMP, and its expiry
    (ms since the epoch, 0 for none; `-` for a key that did not exist)."""
    return (
        f"langgraph_repair:replaced_dumps:{run_id}:{thread_id}",
        f"langgraph_repair:replaced_expiry:{run_id}:{thread_id}",
    )


def registry_keys(thread_id: str, ns: str) -> list[str]:
    """The shallow savers' registries of a namespace's write keys (the sync saver's and
    the async one's are named apart)."""
    safe = to_storage_safe_str(ns)
    return [
        f"write_registry:{thread_id}:{safe}:shallow",
        f"write_keys_zset:{thread_id}:{safe}:shallow",
    ]


def _expiry(now: int, left: Any, dump: Any) -> str:
    if dump is None:
        return "-"
    return str(now + int(left)) if isinstance(left, int) and left > 0 else "0"


def replace_steps(
    run_id: str, where: tuple[str, str, str], key: str, document: Any
) -> Steps[tuple[WriteOutcome, int]]:
    """The head's document (`key`, planned at checkpoint `where[2]`) replaced by
    `document`, the replaced bytes archived: `repaired` with the time the document
    has left to live (ms; 0 for none), or `moved_on` when the head is another now."""
    thread_id, ns, planned_id = where
    kept = [key, *registry_keys(thread_id, ns)]
    yield Watch(kept)
    reads: list[Command] = [("execute_command", "JSON.GET", key, ID)]
    reads += [c for k in kept for c in (("dump", k), ("pttl", k))]
    current, *found, (seconds, micros) = yield Read([*reads, ("time",)])
    if parsed(current) != [planned_id]:
        return "moved_on", 0
    now = int(seconds) * 1000 + int(micros) // 1000
    dumps, expiry = archive_keys(run_id, thread_id)
    pairs = list(zip(kept, found[::2], found[1::2], strict=True))
    left = found[1] if isinstance(found[1], int) and found[1] > 0 else 0
    commands: list[Command] = [
        ("hset", dumps, None, None, {k: d for k, d, _ in pairs if d is not None}),
        ("hset", expiry, None, None, {k: _expiry(now, ttl, d) for k, d, ttl in pairs}),
        ("execute_command", "JSON.SET", key, "$", json.dumps(document)),
    ]
    if left:
        commands.append(("pexpire", key, left))
    return ("repaired", left) if (yield Commit(commands)) is not None else ("moved_on", 0)


def _repair_writes(thread_id: str, ns: str, checkpoint_id: str, offset: int) -> FilterQuery:
    where = (
        (Tag("thread_id") == str(to_storage_safe_id(thread_id)))
        & (Tag("checkpoint_ns") == to_storage_safe_str(ns))
        & (Tag("checkpoint_id") == str(to_storage_safe_id(checkpoint_id)))
    )
    query = FilterQuery(filter_expression=where, return_fields=["task_id"], num_results=PAGE)
    query.paging(offset, PAGE)
    return query


def put_back_steps(undo_of: str, where: tuple[str, str, str], key: str) -> Steps[WriteOutcome]:
    """The bytes a repair replaced RESTOREd while the document is still the repair's
    (checkpoint `where[2]`), the repair's writes deleted; `moved_on` when the
    application wrote since (or nothing was archived)."""
    thread_id, ns, repair_id = where
    kept = [key, *registry_keys(thread_id, ns)]
    written = yield Search("writes", lambda at: _repair_writes(thread_id, ns, repair_id, at))
    yield Watch(kept)
    dumps, expiry = archive_keys(undo_of, thread_id)
    reads: list[Command] = [("execute_command", "JSON.GET", key, ID)]
    reads += [c for k in kept for c in (("hget", dumps, k), ("hget", expiry, k))]
    current, *found = yield Read(reads)
    if parsed(current) != [repair_id] or found[0] is None:
        return "moved_on"
    commands: list[Command] = [("delete", text(doc.id)) for doc in written]
    for k, dump, at in zip(kept, found[::2], found[1::2], strict=True):
        commands += _put_back(k, dump, at)
    commands += [("hdel", dumps, *kept), ("hdel", expiry, *kept)]
    return "repaired" if (yield Commit(commands)) is not None else "moved_on"


def _put_back(key: str, dump: Any, at: Any) -> Sequence[Command]:
    """One archived key RESTOREd over what is there; a key that did not exist before
    the repair deleted; a key the archive does not name left alone."""
    if at is None:
        return []
    if dump is None:
        return [("delete", key)]
    return [("restore", key, int(text(at)), dump, True, True)]
