"""What a thread must keep, so that it reads the same after a prune.

LangGraph loads each namespace's greatest checkpoint id. That head needs:

- its own pending writes (they go with the checkpoint they belong to);
- every blob a kept checkpoint names (a blob is dropped only when no kept
  checkpoint of its namespace names its version);
- before checkpoint format 4, the parent whose writes hold its pending sends;
- for each delta channel it does not store, every ancestor back to the nearest
  one that does (the seed), writes included: LangGraph replays those writes on
  the seed, and a chain cut short rebuilds the channel from nothing, silently;
- a subgraph call's namespace only while the root checkpoint it started from is
  kept: a parent paused inside the call resumes into it.

`--keep-last N` keeps the N newest checkpoints along the head's parent chain (not
by id order: a fork's other branch is not the head's history), each with what it
needs. Everything else of the snapshot may go. Rows written after the snapshot are
never named here, so the application's appends and its writes that land before
their checkpoint survive.
"""

from __future__ import annotations

from collections.abc import Collection, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..decisions.plan import written_after
from .outcome import ThreadPruned
from .rules import PruneRules


@dataclass(frozen=True)
class StoredCheckpoint:
    """One checkpoint row as a prune reads it: no values, only what they depend on."""

    checkpoint_ns: str
    checkpoint_id: str
    parent_id: str | None
    versions: Mapping[str, str] = field(default_factory=dict)
    """Its `channel_versions`: each version names the blob it loads."""
    holds: frozenset[str] = frozenset()
    """The channels whose value this row stores (inline or in a blob of its version)."""
    delta: frozenset[str] = frozenset()
    """The channels this row shows to be delta channels (counted since their last
    snapshot, or stored as a snapshot)."""
    root_id: str | None = None
    """For a subgraph's row, the root checkpoint its call started from."""
    needs_parent: bool = False
    """Before format 4 with pending sends stored on its parent."""
    repaired_from: str | None = None
    """For a checkpoint a repair wrote, the head it repaired: undo copies it back."""
    written_at: str | None = None
    """Its `ts`, as stored."""
    step: int | None = None
    """Its metadata's `step`: -1 for a thread's first checkpoint (the input)."""
    run_id: str | None = None
    """Its metadata's `run_id`: the Agent Server's run that wrote it."""
    source: str | None = None
    """Its metadata's `source`: `input`, `loop`, `update`, `fork`."""


def stored_step(value: object) -> int | None:
    """A metadata `step` as `StoredCheckpoint.step` keeps it: an integer, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_checkpoint(
    where: tuple[str, str, str | None],
    checkpoint: Mapping[str, Any],
    metadata: Any,
    sends: Collection[tuple[str, str | None]] = (),
    holds: Iterable[str] | None = None,
) -> StoredCheckpoint:
    """A stored checkpoint as a plan reads it, from its (namespace, id, parent), its
    checkpoint and its metadata as stored; `sends` names the (namespace, checkpoint) pairs
    holding pending sends, `holds` the channels it stores where its `channel_values`
    were not read."""
    ns, cid, parent = where
    metadata = metadata if isinstance(metadata, Mapping) else {}
    counters = metadata.get("counters_since_delta_snapshot")
    parents = metadata.get("parents")
    detail = metadata.get("langgraph_repair")
    version = checkpoint.get("v")
    held = (checkpoint.get("channel_values") or {}) if holds is None else holds
    return StoredCheckpoint(
        ns,
        cid,
        parent,
        versions={str(k): str(v) for k, v in (checkpoint.get("channel_versions") or {}).items()},
        holds=frozenset(held),
        delta=frozenset(counters) if isinstance(counters, Mapping) else frozenset(),
        root_id=parents.get("") if isinstance(parents, Mapping) else None,
        needs_parent=isinstance(version, int) and version < 4 and (ns, parent) in sends,
        repaired_from=detail.get("source_checkpoint_id") if isinstance(detail, Mapping) else None,
        written_at=checkpoint.get("ts"),
        step=stored_step(metadata.get("step")),
        run_id=_text(metadata.get("run_id")),
        source=_text(metadata.get("source")),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class ThreadPlan:
    """What one thread keeps and lets go, on one snapshot of its rows."""

    kept: dict[str, list[str]]
    """Checkpoint ids kept, by namespace."""
    deleted: dict[str, list[str]]
    """Checkpoint ids deleted, by namespace (with their pending writes)."""
    blobs: dict[str, list[tuple[str, str]]]
    """(channel, version) blobs deleted, by namespace: named by a deleted checkpoint
    and by no kept one."""
    orphaned: dict[str, list[str]]
    """Kept checkpoints whose parent is deleted: their parent pointer is cleared."""
    dropped_namespaces: frozenset[str] = frozenset()
    """Subgraph calls whose root checkpoint is not kept: their rows all go."""
    whole: bool = False
    """The whole thread goes (`--delete-idle`)."""
    writes: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict)
    """Pending writes deleted from checkpoints that are kept, by namespace: (checkpoint
    id, task id, idx). A rollback's, on the checkpoint its run started from."""

    @property
    def checkpoints_deleted(self) -> int:
        return sum(map(len, self.deleted.values()))

    @property
    def changes(self) -> bool:
        return self.checkpoints_deleted > 0 or any(self.writes.values())


MAX_WALK = 100_000
"""Ancestors one walk may visit; a longer chain is walked no further (and kept)."""


def plan_thread(rows: Iterable[StoredCheckpoint], keep_last: int = 1) -> ThreadPlan:
    """The plan for one thread's rows, read in one snapshot."""
    if keep_last < 1:
        raise ValueError(f"keep_last must be at least 1, not {keep_last}")
    by_ns = by_namespace(rows)
    kept = {ns: _kept_in(namespace, keep_last) for ns, namespace in by_ns.items()}
    dropped = _dropped_calls(by_ns, kept.get("", set()))
    for ns in dropped:
        kept[ns] = set()
    deleted = {ns: sorted(set(by_ns[ns]) - kept[ns]) for ns in by_ns}
    return ThreadPlan(
        kept={ns: sorted(ids) for ns, ids in kept.items() if ids},
        deleted={ns: ids for ns, ids in deleted.items() if ids},
        blobs=_unreferenced_blobs(by_ns, kept, deleted),
        orphaned=_orphaned(by_ns, kept),
        dropped_namespaces=frozenset(dropped),
    )


def by_namespace(rows: Iterable[StoredCheckpoint]) -> dict[str, dict[str, StoredCheckpoint]]:
    """A thread's rows by namespace, then by checkpoint id."""
    by_ns: dict[str, dict[str, StoredCheckpoint]] = {}
    for row in rows:
        by_ns.setdefault(row.checkpoint_ns, {})[row.checkpoint_id] = row
    return by_ns


def delta_channels_of(namespace: Mapping[str, StoredCheckpoint]) -> frozenset[str]:
    """The delta channels any row of the namespace shows."""
    return frozenset().union(*(row.delta for row in namespace.values()))


def _kept_in(namespace: Mapping[str, StoredCheckpoint], keep_last: int) -> set[str]:
    """The namespace's head, the newest `keep_last` along its chain, and their needs."""
    head = max(namespace)
    kept = set(_ancestors(namespace, head, limit=keep_last))
    delta = delta_channels_of(namespace)
    pending = list(kept)
    while pending:
        row = namespace[pending.pop()]
        for needed in _needs(namespace, row, delta):
            if needed not in kept:
                kept.add(needed)
                pending.append(needed)
    return kept


def _needs(
    namespace: Mapping[str, StoredCheckpoint], row: StoredCheckpoint, delta: frozenset[str]
) -> Iterable[str]:
    """The ancestors `row` reads when it is loaded, and the head a repair that wrote it
    would copy back on undo."""
    if row.needs_parent and row.parent_id is not None and row.parent_id in namespace:
        yield row.parent_id
    if row.repaired_from is not None and row.repaired_from in namespace:
        yield row.repaired_from
    for channel in delta:
        if channel in row.versions and channel not in row.holds:
            yield from _walk_to_seed(namespace, row, channel)


def _walk_to_seed(
    namespace: Mapping[str, StoredCheckpoint], row: StoredCheckpoint, channel: str
) -> Iterable[str]:
    """Each ancestor LangGraph visits rebuilding `channel`, the seed included."""
    for ancestor in _ancestors(namespace, row.checkpoint_id, limit=MAX_WALK, start=1):
        yield ancestor
        if channel in namespace[ancestor].holds:
            return


def _ancestors(
    namespace: Mapping[str, StoredCheckpoint], checkpoint_id: str, *, limit: int, start: int = 0
) -> list[str]:
    """`checkpoint_id` and its ancestors, newest first, while each parent is stored and
    older than its child (a loop is cut where it turns back)."""
    chain = [checkpoint_id]
    while len(chain) < limit + start:
        parent = namespace[chain[-1]].parent_id
        if parent is None or parent not in namespace or parent >= chain[-1]:
            break
        chain.append(parent)
    return chain[start:]


def _dropped_calls(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]], root_kept: set[str]
) -> list[str]:
    """Subgraph calls (a namespace with a task id) started from a root checkpoint that is
    stored and not kept: no kept root can resume into them. A call whose root is not
    stored yet (its run saves it in the background) is left alone."""
    roots = by_ns.get("", {})
    dropped = []
    for ns, namespace in by_ns.items():
        if ":" not in ns:
            continue
        root_id = namespace[max(namespace)].root_id
        if root_id is not None and root_id in roots and root_id not in root_kept:
            dropped.append(ns)
    return dropped


def _unreferenced_blobs(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]],
    kept: Mapping[str, set[str]],
    deleted: Mapping[str, Sequence[str]],
) -> dict[str, list[tuple[str, str]]]:
    blobs = {}
    for ns, ids in deleted.items():
        named = {pair for i in kept[ns] for pair in by_ns[ns][i].versions.items()}
        gone = {pair for i in ids for pair in by_ns[ns][i].versions.items()} - named
        if gone:
            blobs[ns] = sorted(gone)
    return blobs


def _orphaned(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]], kept: Mapping[str, set[str]]
) -> dict[str, list[str]]:
    orphaned = {}
    for ns, ids in kept.items():
        namespace = by_ns[ns]
        lost = [i for i in ids if namespace[i].parent_id in namespace.keys() - ids]
        if lost:
            orphaned[ns] = sorted(lost)
    return orphaned


def written_since(rows: Iterable[StoredCheckpoint], moment: datetime) -> bool:
    """Whether any namespace's head was written after `moment`: the application may
    still be writing to the thread, which is then left to it."""
    heads: dict[str, StoredCheckpoint] = {}
    for row in rows:
        head = heads.get(row.checkpoint_ns)
        if head is None or row.checkpoint_id > head.checkpoint_id:
            heads[row.checkpoint_ns] = row
    return any(written_after(head.written_at, moment) for head in heads.values())


def thread_plan(
    thread_id: str,
    rows: Sequence[StoredCheckpoint],
    rules: PruneRules,
    asking: Collection[tuple[str, str]] = (),
) -> ThreadPlan | ThreadPruned:
    """The plan for one thread's rows, or its outcome where it is left as it is: written
    within --min-idle, or nothing to delete. `asking` holds the (namespace, checkpoint
    id) of each checkpoint with an open question (an `__interrupt__` write), read where
    the thread is idle enough to go whole (`idle`)."""
    if written_since(rows, rules.recent_after):
        return ThreadPruned(thread_id, skipped="recent")
    if seed_missing(rows):
        return ThreadPruned(thread_id, skipped="delta_seed_missing")
    if idle(rows, rules) and (rules.include_waiting or not waits(rows, asking)):
        return whole_thread(rows)
    plan = plan_thread(rows, rules.keep_last)
    if plan.changes:
        return plan
    held = 0 if rules.compact else held_for_delta(rows, plan)
    return (
        ThreadPruned(thread_id, skipped="delta_chain", freeable=held)
        if held
        else ThreadPruned(thread_id)
    )


def delta_heads(
    rows: Iterable[StoredCheckpoint], plan: ThreadPlan
) -> dict[str, tuple[StoredCheckpoint, frozenset[str]]]:
    """The namespaces whose head rebuilds a delta channel from its ancestors and keeps
    more than two checkpoints for it: each head, with the channels it does not store.
    A snapshot under the head (`compact`) would let the others go."""
    found = {}
    for ns, namespace in by_namespace(rows).items():
        head = namespace[max(namespace)]
        channels = rebuilt_from_ancestors(namespace, head)
        if channels and head.parent_id is not None and len(plan.kept.get(ns, ())) > 2:
            found[ns] = (head, channels)
    return found


def held_for_delta(rows: Sequence[StoredCheckpoint], plan: ThreadPlan) -> int:
    """The checkpoints the plan keeps only for delta chains: what `--compact` frees
    (each namespace then keeps its head and the snapshot under it)."""
    return sum(len(plan.kept[ns]) - 2 for ns in delta_heads(rows, plan))


def seed_missing(rows: Iterable[StoredCheckpoint]) -> bool:
    """Whether a namespace's head rebuilds a delta channel from a chain cut short: LangGraph
    would rebuild the channel from nothing; a prune keeps such a thread as it is."""
    return any(map(cut_channels, by_namespace(rows).values()))


def cut_channels(namespace: Mapping[str, StoredCheckpoint]) -> frozenset[str]:
    """The delta channels the namespace's head rebuilds from a chain cut short: the walk
    ends, with no seed, at a checkpoint whose parent is gone (its pointer names no stored
    row, or was cleared on a checkpoint that is not the thread's first)."""
    head = namespace[max(namespace)]
    cut = set()
    for channel in rebuilt_from_ancestors(namespace, head):
        walked = list(_walk_to_seed(namespace, head, channel))
        last = namespace[walked[-1]] if walked else head
        if channel not in last.holds and _cut_at(last):
            cut.add(channel)
    return frozenset(cut)


def rebuilt_from_ancestors(
    namespace: Mapping[str, StoredCheckpoint], row: StoredCheckpoint
) -> frozenset[str]:
    """The namespace's delta channels that `row` names but does not store: LangGraph
    rebuilds them from its ancestors."""
    return frozenset(
        c for c in delta_channels_of(namespace) if c in row.versions and c not in row.holds
    )


def _cut_at(row: StoredCheckpoint) -> bool:
    """Whether the chain ends at `row` because its parent went, not because it began."""
    if row.parent_id is not None:
        return True  # a parent not stored, or one out of order
    return row.step is not None and row.step >= 0


def idle(rows: Sequence[StoredCheckpoint], rules: PruneRules) -> bool:
    """Whether `--delete-idle` deletes the thread, unless it waits on a human."""
    return rules.idle_before is not None and not written_since(rows, rules.idle_before)


def waits(rows: Iterable[StoredCheckpoint], asking: Collection[tuple[str, str]]) -> bool:
    """Whether a namespace's head asks a human a question not yet answered."""
    heads: dict[str, str] = {}
    for row in rows:
        heads[row.checkpoint_ns] = max(heads.get(row.checkpoint_ns, ""), row.checkpoint_id)
    return any(head in asking for head in heads.items())


def whole_thread(rows: Iterable[StoredCheckpoint]) -> ThreadPlan:
    """Every checkpoint of the snapshot goes, with its writes and the blobs it names."""
    by_ns = {ns: list(namespace.values()) for ns, namespace in by_namespace(rows).items()}
    return ThreadPlan(
        kept={},
        deleted={ns: sorted(r.checkpoint_id for r in found) for ns, found in by_ns.items()},
        blobs={
            ns: sorted({p for r in found for p in r.versions.items()})
            for ns, found in by_ns.items()
        },
        orphaned={},
        whole=True,
    )


def planned(
    thread_id: str, rows: Sequence[StoredCheckpoint], rules: PruneRules, asking_sql: str
) -> Generator[tuple[str, Sequence[Any]], list[Any], ThreadPlan | ThreadPruned]:
    """`thread_plan`, as a store's steps run it: the thread's open questions are asked
    of the store (`asking_sql`) only where the thread may go whole."""
    asking: list[Any] = []
    if idle(rows, rules) and not rules.include_waiting:
        asking = yield asking_sql, (thread_id,)
    return thread_plan(thread_id, rows, rules, {(str(ns), str(cid)) for ns, cid in asking})
