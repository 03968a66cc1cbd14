"""The rows a rewind reads and writes (`decisions.rewind`) on PostgreSQL, shared by the
sync and async stores. A rewind walks parent ids from columns, never decoding a row
that may not decode; its undo copies the unreadable head's row as stored, under a
new id."""

from __future__ import annotations

from ...decisions.plan import DETAIL_KEY, RUN_KEY

RUNG_SQL = """
SELECT checkpoint_id, parent_checkpoint_id,
    CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ->> 'step' END
FROM checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
    AND checkpoint_id = %(checkpoint_id)s"""
# The copy keeps every stored byte but the ids: the checkpoint's own "id" follows its
# row's (JSONB edits need no decoding), and the metadata gains the undo's record where
# it is a JSON object.
COPY_SQL = f"""
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
