"""Rolling a run back on SQLite: the threads it wrote, and each thread's steps, inside
the thread's write transaction (`prune.SqlitePruner`). What goes is
`retention.rollback`'s plan."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from langgraph.checkpoint.serde.base import SerializerProtocol

from ...retention.outcome import ThreadPruned
from ...retention.rollback import StoredWrite, outcome_of, starting_points, thread_rollback
from ...retention.rules import PruneRules
from .prune_sql import NAMED, Steps, carried_out, skeleton_steps

RUN_THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints
WHERE json_valid(CAST(metadata AS TEXT))
AND json_extract(CAST(metadata AS TEXT), '$.run_id') IN (SELECT value FROM json_each(?))
ORDER BY thread_id"""
"""The threads holding a checkpoint of the runs (a JSON array of run ids)."""
WRITES_AT_SQL = f"""
SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel FROM writes
WHERE thread_id = ? AND {NAMED}"""


def rollback_steps(
    record: str,
    thread_id: str,
    runs: frozenset[str],
    columns: Mapping[str, Sequence[str]],
    rules: PruneRules,
    serde: SerializerProtocol,
) -> Steps[ThreadPruned]:
    """One thread's rollback of `runs`, inside its transaction; archived under `record`."""
    stored = yield from skeleton_steps(thread_id, serde)
    if stored is None:
        return ThreadPruned(thread_id, skipped="unreadable")
    points = starting_points(stored, runs)
    found = (yield WRITES_AT_SQL, (thread_id, json.dumps(points))) if points else []
    writes = [StoredWrite(str(ns), str(cid), str(t), int(i), str(c)) for ns, cid, t, i, c in found]
    plan = thread_rollback(thread_id, stored, runs, writes)
    if isinstance(plan, ThreadPruned):
        return plan
    outcome = outcome_of(thread_id, stored, runs, plan)
    return (yield from carried_out(record, plan, columns, rules, outcome))
