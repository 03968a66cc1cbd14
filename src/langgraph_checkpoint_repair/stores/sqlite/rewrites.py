"""The SQL of pending writes rewritten in place on SQLite (`decisions.rewrites`), shared by
the sync and async SQLite stores: today the deletion of a stale answer.

SQLite keeps a run's audit in checkpoint metadata, but a deleted write leaves no
checkpoint to hold it. Its original row goes into `langgraph_repair_rewrites`, a
table of the same file created (if missing) in the transaction that deletes the
write, so `undo --run` can insert it again. A rewrite is one write transaction
(`BEGIN IMMEDIATE`): the head checked, each write's bytes compared with what was
read, the audit rows, then the change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...decisions.rewrites import Params, RewritePlan, WriteRewrite, changes
from ...stale_answers import NULL_TASK_ID, RESUME_CHANNEL

_KEY = "thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?"
CURRENT_VALUE_SQL = f"SELECT value FROM writes WHERE {_KEY}"
AUDIT_TABLE_SQL = """
CREATE TABLE IF NOT EXISTS langgraph_repair_rewrites (
    run_id         TEXT NOT NULL,
    thread_id      TEXT NOT NULL,
    checkpoint_ns  TEXT NOT NULL,
    checkpoint_id  TEXT NOT NULL,
    task_id        TEXT NOT NULL,
    idx            INTEGER NOT NULL,
    channel        TEXT NOT NULL,
    type           TEXT NOT NULL,
    original_blob  BLOB NOT NULL,
    rewritten_blob BLOB,
    recorded_at    TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (run_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
)"""
RECORD_REWRITE_SQL = """
INSERT INTO langgraph_repair_rewrites
    (run_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
     original_blob, rewritten_blob)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
HAS_REWRITES_SQL = (
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'langgraph_repair_rewrites'"
)
REWRITES_OF_SQL = """
SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
    original_blob, rewritten_blob
FROM langgraph_repair_rewrites WHERE run_id = ?
ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"""
UPDATE_VALUE_SQL = f"UPDATE writes SET value = ? WHERE {_KEY}"
DELETE_WRITE_SQL = f"DELETE FROM writes WHERE {_KEY}"
INSERT_WRITE_SQL = """
INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""


# SQLite numbers rows as they are written, and LangGraph's SqliteSaver replaces a null-task
# answer (INSERT OR REPLACE), so a row stored again gets a new rowid: the head's answer
# against the newest resume list any task of the thread wrote.
ANSWER_ORDER_SQL = f"""
SELECT
    (SELECT max(rowid) FROM writes
     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
        AND task_id = '{NULL_TASK_ID}' AND channel = '{RESUME_CHANNEL}'),
    (SELECT max(rowid) FROM writes
     WHERE thread_id = ? AND task_id <> '{NULL_TASK_ID}' AND channel = '{RESUME_CHANNEL}')"""


def answer_order_params(key: Sequence[str]) -> tuple[str, ...]:
    return (*key, key[0])


def answer_is_new(row: Sequence[Any] | None) -> bool:
    """Whether the head's null-task answer (`ANSWER_ORDER_SQL`) was stored after every
    answer a task of the thread took: a new answer no task has read yet (a run stopped
    before its task reached it), never a stale one, however equal its value."""
    if row is None or row[0] is None:
        return False
    return row[1] is None or int(row[0]) > int(row[1])


def drops_answer(plan: RewritePlan) -> bool:
    return plan.does("resume_dropped")


def statements(writes: Iterable[WriteRewrite]) -> list[tuple[str, list[Params]]]:
    """The statements giving each write its rewritten state, with their parameters."""
    found = zip(
        (UPDATE_VALUE_SQL, DELETE_WRITE_SQL, INSERT_WRITE_SQL), changes(writes), strict=True
    )
    return [(statement, params) for statement, params in found if params]
