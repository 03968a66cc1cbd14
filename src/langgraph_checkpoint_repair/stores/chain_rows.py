"""The rows a rewind reads and writes (`decisions.rewind`), as LangGraph's PostgreSQL and
SQLite tables keep them, shared by the sync and async stores. A rewind walks parent
ids from columns, never decoding a row that may not decode; its undo copies the
unreadable head's row as stored, under a new id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..decisions.plan import DETAIL_KEY, RUN_KEY
from ..decisions.rewind import Rung, step_of

POSTGRES_RUNG_SQL = """
SELECT checkpoint_id, parent_checkpoint_id,
    CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ->> 'step' END
FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
    AND checkpoint_id = %(checkpoint_id)s"""
SQLITE_RUNG_SQL = """
SELECT checkpoint_id, parent_checkpoint_id,
    CASE WHEN json_valid(CAST(metadata AS TEXT))
        AND json_type(CAST(metadata AS TEXT)) = 'object'
    THEN json_extract(CAST(metadata AS TEXT), '$.step') END
FROM checkpoints
WHERE thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns
    AND checkpoint_id = :checkpoint_id"""

# The copy keeps every stored byte but the ids: the checkpoint's own "id" follows its
# row's on PostgreSQL (JSONB edits need no decoding), and the metadata gains the undo's
# record where it is a JSON object. SQLite's checkpoint blob is copied as it is.
POSTGRES_COPY_SQL = f"""
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT thread_id, checkpoint_ns, %(new)s, %(parent)s, type,
    CASE WHEN jsonb_typeof(checkpoint) = 'object'
        THEN jsonb_set(checkpoint, '{{id}}', to_jsonb(%(new)s::text)) ELSE checkpoint END,
    CASE WHEN jsonb_typeof(metadata) = 'object'
        THEN metadata || jsonb_build_object(
            '{RUN_KEY}', %(record)s::jsonb -> '{RUN_KEY}',
            '{DETAIL_KEY}', %(record)s::jsonb -> '{DETAIL_KEY}')
        ELSE metadata END
FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
    AND checkpoint_id = %(source)s"""
SQLITE_COPY_SQL = f"""
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT thread_id, checkpoint_ns, :new, :parent, type, checkpoint,
    CASE WHEN json_valid(CAST(metadata AS TEXT))
        AND json_type(CAST(metadata AS TEXT)) = 'object'
    THEN CAST(json_set(CAST(metadata AS TEXT),
        '$.{RUN_KEY}', json_extract(:record, '$.{RUN_KEY}'),
        '$.{DETAIL_KEY}', json_extract(:record, '$.{DETAIL_KEY}')) AS BLOB)
    ELSE metadata END
FROM checkpoints
WHERE thread_id = :thread_id AND checkpoint_ns = :checkpoint_ns AND checkpoint_id = :source"""


def rung_from(rows: Sequence[Sequence[Any]]) -> Rung | None:
    """The rung query's one row as a `Rung`; None when the checkpoint is gone."""
    if not rows:
        return None
    checkpoint_id, parent_id, step = rows[0]
    return Rung(str(checkpoint_id), None if parent_id is None else str(parent_id), step_of(step))
