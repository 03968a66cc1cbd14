"""The SQL of pending writes rewritten in place (`decisions.rewrites`), shared by the sync
and async PostgreSQL stores.

A rewrite is one transaction: the thread's repair lock (`base.CLAIM_SQL`), the head
checked, each write's bytes compared with what was read (an application write since
then wins: nothing is changed), the audit rows, then the update, or the delete of a
write whose rewrite is none (a stale answer). Undo takes the same lock and restores
only rows still as the repair left them: bytes still as rewritten, or a deleted
write's slot still empty (it is inserted again).

Each change is a compare-and-set: the update and the delete name the bytes they
expect, the insert does nothing where the slot is taken, and a statement that
changes fewer rows than it was given (an application wrote in between) undoes the
whole transaction. No row is locked with `SELECT ... FOR UPDATE`, which PostgreSQL
grants only with UPDATE: each statement asks for its own privilege alone, so a run is
checked for exactly what it may change (`decisions.rewrites.InPlaceChanges`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ...decisions.rewrites import Params, RewritePlan, WriteRewrite, changes

_KEY = "thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s AND idx = %s"
CURRENT_BLOB_SQL = f"SELECT blob FROM checkpoint_writes WHERE {_KEY}"
UPDATE_BLOB_SQL = f"UPDATE checkpoint_writes SET blob = %s WHERE {_KEY} AND blob = %s"
DELETE_WRITE_SQL = f"DELETE FROM checkpoint_writes WHERE {_KEY} AND blob = %s"
INSERT_WRITE_SQL = """
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel,
    type, blob)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING"""
RECORD_REWRITE_SQL = """
INSERT INTO langgraph_repair_rewrites
    (run_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
     original_blob, rewritten_blob)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"""
HAS_REWRITES_SQL = "SELECT to_regclass('langgraph_repair_rewrites') IS NOT NULL"
REWRITES_OF_SQL = """
SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
    original_blob, rewritten_blob
FROM langgraph_repair_rewrites WHERE run_id = %s
ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"""


def audit_row(run_id: str, plan: RewritePlan) -> tuple[Any, ...]:
    """The run's row for the head in `langgraph_repair_threads` (`base.RECORD_REPAIR_SQL`):
    no checkpoint was written, so the source and the repair are both the head itself."""
    head = plan.checkpoint_id
    actions = json.dumps(plan.audit_actions())
    return (run_id, plan.thread_id, plan.checkpoint_ns, head, head, actions)


class WritesChanged(Exception):
    """A compared statement found a write no longer as read: the transaction is undone."""


def statements(writes: Iterable[WriteRewrite]) -> list[tuple[str, list[Params]]]:
    """The statements giving each write its rewritten state (`decisions.rewrites.changes`),
    with their parameters: its new bytes, none, or, undoing a delete, its row again; an
    update and a delete also name the bytes they expect to find."""
    sql = (UPDATE_BLOB_SQL, DELETE_WRITE_SQL, INSERT_WRITE_SQL)
    found = zip(sql, changes(writes, compared=True), strict=True)
    return [(statement, params) for statement, params in found if params]


def check_changed(rowcount: int, params: Sequence[Params]) -> None:
    """Every row a compared statement was given changed, or `WritesChanged`."""
    if rowcount != len(params):
        raise WritesChanged
