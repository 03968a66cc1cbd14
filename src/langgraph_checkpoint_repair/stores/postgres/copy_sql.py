"""`acopy_thread` on PostgreSQL (`stores.copying`): one INSERT ... SELECT per table,
inside one REPEATABLE READ transaction, so the copy is of one snapshot of the thread."""

from __future__ import annotations

from ..copying import CopySql

COPY = CopySql(
    taken="SELECT 1 FROM checkpoints WHERE thread_id = %s LIMIT 1",
    tables=("checkpoints", "checkpoint_blobs", "checkpoint_writes"),
    insert="WITH put AS (INSERT INTO {table} ({listed}) SELECT {chosen} FROM {table} "
    "WHERE thread_id = %s RETURNING 1) SELECT count(*) FROM put",
    mark="%s",
    metadata="CASE WHEN jsonb_typeof(metadata) = 'object' AND metadata ? 'thread_id' "
    "THEN jsonb_set(metadata, '{thread_id}', to_jsonb(%s::text)) ELSE metadata END",
    counted=lambda rows: int(rows[0][0]),
)
