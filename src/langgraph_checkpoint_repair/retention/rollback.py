"""What rolling back a run takes from a thread, and what it leaves.

The Agent Server stamps each checkpoint a run writes with the run's id (metadata
`run_id`). Rolling a run back (the server's `multitask_strategy="rollback"`, or
`langgraph-repair rollback`) deletes those checkpoints, their pending writes and the
blobs no other checkpoint names, so that each namespace's head is again the checkpoint
the run started from. Two things keep rows:

- a checkpoint of another run that needs one of the run's to load (the chain of a delta
  channel, the pending sends of an older format, the head a repair was made from) keeps
  it: a later run built on this one, and the thread reads as that run left it. A later
  checkpoint that only points at one of the run's loses the pointer, as a prune does.
- the checkpoint the run started from keeps the writes it held before the run. The run
  added an answer (`__resume__`), its input or `Command(update=...)` (the input task's
  writes: a delta channel's input is stored there), and the writes of the tasks it
  resumed (those holding a question or an error there); where that checkpoint holds
  neither and the run went on from it (its first checkpoint a `loop` one), every write
  there is the run's. A second question the run answered in the same task leaves no
  trace of the first answer's run: both answers go, and the task asks again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID, uuid5

from ..in_flight import INTERRUPT_CHANNEL
from ..stale_answers import NULL_TASK_ID, RESUME_CHANNEL
from .keep import StoredCheckpoint, ThreadPlan, _needs, by_namespace, delta_channels_of
from .outcome import ThreadPruned

ERROR_CHANNEL = "__error__"
INPUT_TASK = "__input__"
"""`uuid5(checkpoint id, INPUT_TASK)`: the task id a run's delta input is stored under,
on the checkpoint it starts from."""
STOPPED = (INTERRUPT_CHANNEL, ERROR_CHANNEL)


@dataclass(frozen=True)
class StoredWrite:
    """A pending write as a rollback reads it: where it is, and no value."""

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str


def of_runs(rows: Iterable[StoredCheckpoint], runs: frozenset[str]) -> dict[str, set[str]]:
    """The runs' checkpoints, by namespace."""
    found: dict[str, set[str]] = {}
    for row in rows:
        if row.run_id in runs:
            found.setdefault(row.checkpoint_ns, set()).add(row.checkpoint_id)
    return found


def starting_points(
    rows: Sequence[StoredCheckpoint], runs: frozenset[str]
) -> list[tuple[str, str]]:
    """Each namespace's checkpoint the runs started from, where it is the head once they
    are gone: (namespace, checkpoint id). Its writes are read for what the runs added."""
    by_ns = by_namespace(rows)
    gone = _deleted(by_ns, of_runs(rows, runs))
    points = []
    for ns, ids in gone.items():
        namespace = by_ns[ns]
        left = namespace.keys() - ids
        if not left:
            continue
        head = max(left)
        if any(namespace[i].parent_id == head for i in ids):
            points.append((ns, head))
    return points


def plan_rollback(
    rows: Sequence[StoredCheckpoint], runs: frozenset[str], writes: Iterable[StoredWrite] = ()
) -> ThreadPlan:
    """The plan taking `runs` out of one thread's rows, read in one snapshot; `writes` are
    those of its `starting_points`."""
    by_ns = by_namespace(rows)
    deleted = _deleted(by_ns, of_runs(rows, runs))
    kept = {ns: set(namespace) - deleted.get(ns, set()) for ns, namespace in by_ns.items()}
    return ThreadPlan(
        kept={ns: sorted(ids) for ns, ids in kept.items() if ids},
        deleted={ns: sorted(ids) for ns, ids in deleted.items() if ids},
        blobs=_unnamed_blobs(by_ns, kept, deleted),
        orphaned=_pointing_at(by_ns, kept, deleted),
        writes=runs_writes(by_ns, deleted, writes),
    )


def built_on(rows: Sequence[StoredCheckpoint], runs: frozenset[str], plan: ThreadPlan) -> int:
    """The runs' checkpoints the plan keeps: another run's checkpoints need them."""
    ours = of_runs(rows, runs)
    return sum(len(ours[ns] & set(plan.kept.get(ns, ()))) for ns in ours)


def _deleted(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]], ours: Mapping[str, set[str]]
) -> dict[str, set[str]]:
    """The runs' checkpoints less those a checkpoint that stays needs to load."""
    deleted = {ns: set(ids) for ns, ids in ours.items()}
    for ns, ids in deleted.items():
        namespace = by_ns[ns]
        delta = delta_channels_of(namespace)
        pending = [i for i in namespace if i not in ids]
        while pending:
            for needed in _needs(namespace, namespace[pending.pop()], delta):
                if needed in ids:
                    ids.discard(needed)
                    pending.append(needed)
    return deleted


def _unnamed_blobs(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]],
    kept: Mapping[str, set[str]],
    deleted: Mapping[str, set[str]],
) -> dict[str, list[tuple[str, str]]]:
    blobs = {}
    for ns, ids in deleted.items():
        named = {pair for i in kept[ns] for pair in by_ns[ns][i].versions.items()}
        gone = {pair for i in ids for pair in by_ns[ns][i].versions.items()} - named
        if gone:
            blobs[ns] = sorted(gone)
    return blobs


def _pointing_at(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]],
    kept: Mapping[str, set[str]],
    deleted: Mapping[str, set[str]],
) -> dict[str, list[str]]:
    """Kept checkpoints whose parent goes: a later run's, whose pointer is cleared."""
    found = {}
    for ns, ids in deleted.items():
        lost = sorted(i for i in kept[ns] if by_ns[ns][i].parent_id in ids)
        if lost:
            found[ns] = lost
    return found


def runs_writes(
    by_ns: Mapping[str, Mapping[str, StoredCheckpoint]],
    deleted: Mapping[str, set[str]],
    writes: Iterable[StoredWrite],
) -> dict[str, list[tuple[str, str, int]]]:
    """The writes the runs added to the checkpoints they started from, by namespace."""
    at: dict[tuple[str, str], list[StoredWrite]] = {}
    for write in writes:
        at.setdefault((write.checkpoint_ns, write.checkpoint_id), []).append(write)
    found: dict[str, list[tuple[str, str, int]]] = {}
    for (ns, checkpoint_id), held in sorted(at.items()):
        went_on = _went_on_from(by_ns[ns], deleted.get(ns, set()), checkpoint_id)
        theirs = added_by_run(checkpoint_id, held, went_on)
        if theirs:
            found[ns] = [(checkpoint_id, w.task_id, w.idx) for w in theirs]
    return found


def _went_on_from(
    namespace: Mapping[str, StoredCheckpoint], deleted: set[str], checkpoint_id: str
) -> bool:
    """Whether a deleted checkpoint is a `loop` child of `checkpoint_id`: the run ran
    that checkpoint's tasks."""
    return any(
        namespace[i].parent_id == checkpoint_id and namespace[i].source == "loop" for i in deleted
    )


def added_by_run(
    checkpoint_id: str, writes: Sequence[StoredWrite], went_on: bool
) -> list[StoredWrite]:
    """Of the writes held by the checkpoint a run started from, those the run added."""
    stopped = {w.task_id for w in writes if w.channel in STOPPED}
    if not stopped and went_on:
        return list(writes)
    input_task = str(uuid5(UUID(checkpoint_id), INPUT_TASK)) if _is_uuid(checkpoint_id) else ""
    return [
        w
        for w in writes
        if w.channel == RESUME_CHANNEL
        or w.task_id in (NULL_TASK_ID, input_task)
        or (w.task_id in stopped and w.channel not in STOPPED)
    ]


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def thread_rollback(
    thread_id: str,
    rows: Sequence[StoredCheckpoint],
    runs: frozenset[str],
    writes: Iterable[StoredWrite] = (),
) -> ThreadPlan | ThreadPruned:
    """The plan for one thread, or its outcome where nothing of the runs can go."""
    plan = plan_rollback(rows, runs, writes)
    kept = built_on(rows, runs, plan)
    if plan.changes:
        return plan
    if kept:
        return ThreadPruned(thread_id, skipped="built_on", built_on=kept, detail=BUILT_ON)
    return ThreadPruned(thread_id)


def outcome_of(
    thread_id: str, rows: Sequence[StoredCheckpoint], runs: frozenset[str], plan: ThreadPlan
) -> ThreadPruned:
    """The outcome a plan starts from: how many of the runs' checkpoints it keeps."""
    kept = built_on(rows, runs, plan)
    detail = BUILT_ON if kept else DESCENDED if plan.orphaned else ""
    return ThreadPruned(thread_id, built_on=kept, detail=detail)


BUILT_ON = "a later run's checkpoints need some of the run's: those stay"
DESCENDED = (
    "a later run's checkpoints descend from the run's: they read the same, and lose their "
    "parent pointer"
)
