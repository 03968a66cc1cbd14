"""The SQL of pending writes rewritten in place (`stores.rewrites`), shared by the sync
and async PostgreSQL stores.

A rewrite is one transaction: the thread's repair lock (`base.CLAIM_SQL`), the head
checked, each write's row locked and its bytes compared with what was read (an
application write since then wins: nothing is changed), the audit rows, then the
update, or the delete of a write whose rewrite is none (a stale answer). Undo takes
the same lock and restores only rows still as the repair left them: bytes still as
rewritten, or a deleted write's slot still empty (it is inserted again).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..races import WriteOutcome
from ..rewrites import RewritePlan, WriteRewrite

_KEY = "thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s AND idx = %s"
CURRENT_BLOB_SQL = f"SELECT blob FROM checkpoint_writes WHERE {_KEY} FOR UPDATE"
UPDATE_BLOB_SQL = f"UPDATE checkpoint_writes SET blob = %s WHERE {_KEY}"
DELETE_WRITE_SQL = f"DELETE FROM checkpoint_writes WHERE {_KEY}"
INSERT_WRITE_SQL = """
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel,
    type, blob)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"""
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


def rewrite_rows(run_id: str, plan: RewritePlan) -> list[tuple[Any, ...]]:
    return [
        (run_id, *write.key, write.channel, write.type, write.original, write.rewritten)
        for write in plan.writes
    ]


def statements(writes: Iterable[WriteRewrite]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The statements giving each write its rewritten state, with their parameters:
    its new bytes (`UPDATE_BLOB_SQL`), none (`DELETE_WRITE_SQL`), or, undoing a delete,
    its row again (`INSERT_WRITE_SQL`)."""
    updates: list[tuple[Any, ...]] = []
    deletes: list[tuple[Any, ...]] = []
    inserts: list[tuple[Any, ...]] = []
    for write in writes:
        if write.rewritten is None:
            deletes.append(write.key)
        elif write.original is None:
            inserts.append((*write.key, write.channel, write.type, write.rewritten))
        else:
            updates.append((write.rewritten, *write.key))
    found = [(UPDATE_BLOB_SQL, updates), (DELETE_WRITE_SQL, deletes), (INSERT_WRITE_SQL, inserts)]
    return [(statement, params) for statement, params in found if params]


def write_from_row(row: Sequence[Any]) -> WriteRewrite:
    thread_id, ns, checkpoint_id, task_id, idx, channel, type_, original, rewritten = row
    return WriteRewrite(
        str(thread_id),
        str(ns),
        str(checkpoint_id),
        str(task_id),
        int(idx),
        str(channel),
        str(type_),
        bytes(original),
        None if rewritten is None else bytes(rewritten),
    )


def before_rewriting(current: Sequence[bytes | None], plan: RewritePlan) -> WriteOutcome | None:
    """None when every write still holds the bytes read; `claimed` when another run has
    rewritten them all already; `moved_on` when anything else changed them."""
    states = {write.state(blob) for write, blob in zip(plan.writes, current, strict=True)}
    if states == {"as_read"}:
        return None
    return "claimed" if states == {"as_rewritten"} else "moved_on"


RestoreOutcome = str
"""`restored`, or why a write was left alone: `claimed` (already restored, or another
undo holds the thread), `moved_on` (its bytes changed since the repair)."""


def restore_outcome(write: WriteRewrite, current: bytes | None) -> RestoreOutcome:
    """What undo does with one rewritten write, from its bytes now."""
    state = write.state(current)
    if state == "as_rewritten":
        return "restored"
    return "claimed" if state == "as_read" else "moved_on"
