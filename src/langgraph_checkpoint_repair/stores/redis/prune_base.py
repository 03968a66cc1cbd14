"""A prune of a Redis store as steps, which the sync and async pruners run (`prune`,
`aprune`): the plan and the keys are decided here, the I/O there.

RedisSaver keeps each checkpoint in keys of its own: its document, its pending writes'
documents, the registry of those writes, and each namespace's pointer to its head. A
prune plans on the thread's documents as `retention.keep` plans on rows, then deletes
the keys of each checkpoint it lets go in one MULTI/EXEC under WATCH: an application
that writes to the thread in between makes the transaction fail, and the thread is left
as it was (`changed`; a rerun finishes it). Each key is archived first as the server's
own DUMP with its expiry, so undo RESTOREs it byte for byte, its TTL included; the
archive expires when the last key it holds would have, so a prune extends no TTL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.redis.util import (
    from_storage_safe_id,
    from_storage_safe_str,
    to_storage_safe_id,
)
from redisvl.query import FilterQuery
from redisvl.query.filter import Tag

from ...retention.keep import StoredCheckpoint, ThreadPlan, read_checkpoint, thread_plan
from ...retention.outcome import ThreadPruned
from ...retention.rules import PruneRules
from .archive import CLEARED, PARENT, ROWS, TABLE_OF, Doomed, archived
from .base import PAGE, registry_key, stored_metadata
from .steps import Command, Commit, Read, Search, Steps, Watch, parsed, text

NOT_COMPACTED = (
    "a Redis store is not compacted: RedisSaver's put would point the thread at the "
    "snapshot; its delta chain is kept whole"
)
NO_ROLLBACK = (
    "rollback deletes rows of PostgreSQL and SQLite stores only; on a Redis store, "
    "prune, undo and forget run"
)
PATHS = (
    "$.checkpoint_ns", "$.checkpoint_id", "$.parent_checkpoint_id",
    "$.checkpoint.channel_versions", "$.checkpoint.v", "$.checkpoint.ts", "$.metadata",
)  # fmt: skip
"""What a plan reads of a checkpoint document (its values are not read)."""
VALUES = "$.checkpoint.channel_values"


def root_pointers(saver: Any) -> str:
    """The SCAN pattern of every thread's root namespace pointer."""
    return str(saver._make_redis_checkpoint_latest_key("*", ""))


def thread_of(saver: Any, pointer: Any) -> str:
    """The thread a root pointer names (its key, the storage-safe forms undone)."""
    head, tail = root_pointers(saver).split("*")
    return from_storage_safe_id(text(pointer)[len(head) : -len(tail)])


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass
class ThreadKeys:
    """A thread's keys as the indexes list them: each checkpoint's document, and its
    writes' documents with their channels."""

    checkpoints: dict[tuple[str, str], str] = field(default_factory=dict)
    writes: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)

    def namespaces(self) -> set[str]:
        return {ns for ns, _ in self.checkpoints}

    def written(self, channel: str) -> set[tuple[str, str]]:
        """The (namespace, checkpoint) pairs holding a write to `channel`."""
        return {at for at, found in self.writes.items() if any(c == channel for _, c in found)}


def by_thread(thread_id: str, fields: list[str], offset: int) -> FilterQuery:
    query = FilterQuery(
        filter_expression=Tag("thread_id") == str(to_storage_safe_id(thread_id)),
        return_fields=fields,
        num_results=PAGE,
    )
    query.paging(offset, PAGE)
    return query


def _where(doc: Any) -> tuple[str, str]:
    ns = from_storage_safe_str(text(getattr(doc, "checkpoint_ns", "")))
    return ns, from_storage_safe_id(text(getattr(doc, "checkpoint_id", "")))


def thread_keys(thread_id: str) -> Steps[ThreadKeys]:
    """The thread's keys, from the saver's two indexes."""
    fields = ["checkpoint_ns", "checkpoint_id"]
    found = ThreadKeys()
    for doc in (yield Search("checkpoints", lambda at: by_thread(thread_id, fields, at))):
        found.checkpoints[_where(doc)] = text(doc.id)
    writes = yield Search("writes", lambda at: by_thread(thread_id, [*fields, "channel"], at))
    for doc in writes:
        found.writes.setdefault(_where(doc), []).append(
            (text(doc.id), text(getattr(doc, "channel", "")))
        )
    return found


def stored_rows(keys: ThreadKeys, replies: Sequence[Any]) -> list[StoredCheckpoint] | None:
    """The thread's checkpoints from their documents (JSON.GET of `PATHS`, then
    JSON.OBJKEYS of the values, for each); None when one is gone or odd."""
    sends = keys.written("__pregel_tasks")
    rows = []
    for fields, names in zip(replies[::2], replies[1::2], strict=True):
        row = _stored_row(fields, names, sends)
        if row is None:
            return None
        rows.append(row)
    return rows


def _stored_row(fields: Any, names: Any, sends: set[tuple[str, str]]) -> StoredCheckpoint | None:
    found = parsed(fields)
    if not isinstance(found, dict):
        return None
    value = {path: (found.get(path) or [None])[0] for path in PATHS}
    ns, cid, parent = value["$.checkpoint_ns"], value["$.checkpoint_id"], value[PARENT]
    if not isinstance(ns, str) or not isinstance(cid, str):
        return None
    checkpoint = {
        "channel_versions": value["$.checkpoint.channel_versions"],
        "v": value["$.checkpoint.v"],
        "ts": value["$.checkpoint.ts"],
    }
    held = names[0] if isinstance(names, list) and names and isinstance(names[0], list) else []
    where = (
        from_storage_safe_str(ns),
        from_storage_safe_id(cid),
        from_storage_safe_id(parent) if isinstance(parent, str) and parent else None,
    )
    metadata = stored_metadata(value["$.metadata"])
    return read_checkpoint(where, checkpoint, metadata, sends, map(text, held))


def doomed_keys(
    plan: ThreadPlan,
    keys: ThreadKeys,
    thread_id: str,
    pointer: Callable[[str, str], str],
) -> list[Doomed]:
    """Every key of each checkpoint the plan deletes, and the pointer of each namespace
    it empties."""
    doomed = []
    for ns, ids in plan.deleted.items():
        for cid in ids:
            doomed.append(Doomed(keys.checkpoints[(ns, cid)], "checkpoint"))
            doomed += [Doomed(key, "write") for key, _ in keys.writes.get((ns, cid), [])]
            doomed.append(Doomed(registry_key(thread_id, ns, cid), "registry"))
    kept = set(plan.kept)
    for ns in sorted(keys.namespaces() - kept):
        doomed.append(Doomed(pointer(thread_id, ns), "pointer"))
    return doomed


def dumped(doomed: Sequence[Doomed], replies: Sequence[Any]) -> list[Doomed]:
    """The keys with their DUMP and expiry (replies of DUMP and PTTL for each, then
    TIME); a key that does not exist (a checkpoint with no registry) is dropped."""
    seconds, micros = replies[-1]
    now = int(seconds) * 1000 + int(micros) // 1000
    found = []
    for key, dump, left in zip(doomed, replies[:-1:2], replies[1:-1:2], strict=True):
        if isinstance(dump, bytes):
            at = now + int(left) if isinstance(left, int) and left > 0 else 0
            found.append(Doomed(key.key, key.kind, dump, at))
    return found


def dump_commands(doomed: Iterable[Doomed]) -> list[Command]:
    return [*(c for d in doomed for c in (("dump", d.key), ("pttl", d.key))), ("time",)]


def weighed(outcome: ThreadPruned, doomed: Iterable[Doomed]) -> ThreadPruned:
    """What the keys weigh, added to the outcome: documents count as rows, every key's
    DUMP as its bytes."""
    for key in doomed:
        rows = key.kind in ROWS
        outcome.deleted.add(TABLE_OF[key.kind], int(rows), len(key.dump or b""))
    return outcome


def deletion(
    run_id: str,
    thread_id: str,
    doomed: Sequence[Doomed],
    orphans: Mapping[str, str],
    archive: bool,
    cleared: str = CLEARED,
) -> list[Command]:
    """The transaction: the keys archived (`archive`), deleted, and the orphans' parent
    pointers cleared (`orphans`: each kept document's key and its pointer as stored),
    as the saver stores a first checkpoint's (`cleared`)."""
    commands: list[Command] = []
    if archive:
        commands += archived(run_id, thread_id, doomed, orphans)
    commands += [("delete", d.key) for d in doomed]
    commands += [("execute_command", "JSON.SET", key, PARENT, cleared) for key in orphans]
    return commands


@dataclass(frozen=True)
class Layout:
    """What a prune needs to know of a Redis layout: how a thread's keys are listed,
    its documents read, which keys go with the checkpoints a plan deletes, each
    namespace's latest pointer (None: the layout keeps none), how a cleared parent
    pointer is stored."""

    thread_keys: Callable[[str], Steps[ThreadKeys]]
    rows: Callable[[ThreadKeys, Sequence[Any]], list[StoredCheckpoint] | None]
    doomed: Callable[[ThreadPlan, ThreadKeys, str], list[Doomed]]
    pointer: Callable[[str, str], str] | None = None
    cleared: str = CLEARED


def full_layout(pointer: Callable[[str, str], str]) -> Layout:
    """RedisSaver's layout, its pointers named by the saver (`pointer`)."""
    return Layout(
        thread_keys, stored_rows, lambda plan, keys, t: doomed_keys(plan, keys, t, pointer), pointer
    )


def prune_steps(
    run_id: str, thread_id: str, rules: PruneRules, layout: Layout
) -> Steps[ThreadPruned]:
    """One thread's prune: its keys listed and watched, its documents read, planned,
    then (unless dry) archived and deleted in one transaction."""
    keys = yield from layout.thread_keys(thread_id)
    pointer = layout.pointer
    pointers = {ns: pointer(thread_id, ns) for ns in sorted(keys.namespaces())} if pointer else {}
    if not rules.dry_run:
        yield Watch([*keys.checkpoints.values(), *pointers.values(), *_write_keys(keys)])
    rows = yield from read_rows(keys, pointers, layout.rows)
    if rows is None:
        return ThreadPruned(thread_id, skipped="changed")
    plan = thread_plan(thread_id, rows, rules, keys.written("__interrupt__"))
    if isinstance(plan, ThreadPruned):
        return plan
    to_go = layout.doomed(plan, keys, thread_id)
    doomed = dumped(to_go, (yield Read(dump_commands(to_go))))
    outcome = weighed(ThreadPruned(thread_id, whole=plan.whole), doomed)
    if rules.dry_run:
        return outcome
    orphans = orphans_of(plan, keys, rows)
    committed = deletion(run_id, thread_id, doomed, orphans, rules.archive, layout.cleared)
    if (yield Commit(committed)) is None:
        return ThreadPruned(thread_id, skipped="changed")
    return outcome


def _write_keys(keys: ThreadKeys) -> list[str]:
    return [key for found in keys.writes.values() for key, _ in found]


def read_rows(
    keys: ThreadKeys,
    pointers: Mapping[str, str],
    rows_of: Callable[[ThreadKeys, Sequence[Any]], list[StoredCheckpoint] | None],
) -> Steps[list[StoredCheckpoint] | None]:
    """The thread's checkpoints read; None when a document went, or when a namespace's
    pointer names a key other than its greatest id (the application wrote meanwhile)."""
    listed = list(keys.checkpoints.values())
    commands: list[Command] = []
    for key in listed:
        commands += [("execute_command", "JSON.GET", key, *PATHS)]
        commands += [("execute_command", "JSON.OBJKEYS", key, VALUES)]
    commands += [("get", key) for key in pointers.values()]
    replies = yield Read(commands)
    rows = rows_of(keys, replies[: 2 * len(listed)])
    heads = {ns: keys.checkpoints[(ns, cid)] for ns, cid in sorted(keys.checkpoints)}
    named = dict(zip(pointers, replies[2 * len(listed) :], strict=True))
    if rows is None or any(text(named[ns]) != heads[ns] for ns in named if named[ns]):
        return None
    return rows


def orphans_of(
    plan: ThreadPlan, keys: ThreadKeys, rows: Sequence[StoredCheckpoint]
) -> dict[str, str]:
    """Each kept document whose parent goes, with its parent pointer as stored."""
    parents = {(r.checkpoint_ns, r.checkpoint_id): r.parent_id for r in rows}
    return {
        keys.checkpoints[(ns, cid)]: str(to_storage_safe_id(parents[(ns, cid)] or ""))
        for ns, ids in plan.orphaned.items()
        for cid in ids
    }


def skeleton_steps(thread_id: str, layout: Layout) -> Steps[list[StoredCheckpoint] | None]:
    """The thread's checkpoints as a plan reads them (what `--compact` looks at)."""
    keys = yield from layout.thread_keys(thread_id)
    return (yield from read_rows(keys, {}, layout.rows))
