"""Rolling a run back on PostgreSQL: the threads it wrote, and each thread's steps, on
one snapshot under the prune's lock (`prune_sql`), so that a rollback and a prune of
one thread never interleave. What goes is `retention.rollback`'s plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...retention.outcome import ThreadPruned
from ...retention.rollback import StoredWrite, outcome_of, starting_points, thread_rollback
from ...retention.rules import PruneRules
from .prune_sql import PAIRS, THREAD_LOCK_SQL, Steps, carried_out, skeleton_steps

RUN_THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints
WHERE metadata ->> 'run_id' = ANY(%s) AND (%s::text[] IS NULL OR thread_id = ANY(%s))
ORDER BY thread_id"""
"""The threads holding a checkpoint of the runs. LangGraph's tables index no metadata, so
this reads the whole table; an index on `(metadata ->> 'run_id')` makes it a lookup."""
WRITES_AT_SQL = f"""
SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel FROM checkpoint_writes
WHERE thread_id = %s AND {PAIRS}"""


def rollback_steps(
    record: str,
    thread_id: str,
    runs: frozenset[str],
    columns: Mapping[str, Sequence[str]],
    rules: PruneRules,
) -> Steps[ThreadPruned]:
    """One thread's rollback of `runs`, inside its snapshot; archived under `record`."""
    (held, _), *_ = yield THREAD_LOCK_SQL, (thread_id,)
    if not held:
        return ThreadPruned(thread_id, skipped="claimed")
    stored = yield from skeleton_steps(thread_id)
    points = starting_points(stored, runs)
    found = (yield WRITES_AT_SQL, (thread_id, *_columns(points))) if points else []
    writes = [StoredWrite(str(ns), str(cid), str(t), int(i), str(c)) for ns, cid, t, i, c in found]
    plan = thread_rollback(thread_id, stored, runs, writes)
    if isinstance(plan, ThreadPruned):
        return plan
    outcome = outcome_of(thread_id, stored, runs, plan)
    return (yield from carried_out(record, plan, columns, rules, outcome))


def _columns(pairs: Sequence[tuple[str, str]]) -> list[list[str]]:
    return [[pair[0] for pair in pairs], [pair[1] for pair in pairs]]
