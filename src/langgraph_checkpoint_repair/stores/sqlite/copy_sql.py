"""`acopy_thread` on SQLite (`stores.copying`): one INSERT ... SELECT per table, inside
one `BEGIN IMMEDIATE` transaction, so no writer changes the thread meanwhile."""

from __future__ import annotations

from ..copying import CopySql

_TEXT = "CAST(metadata AS TEXT)"
COPY = CopySql(
    taken="SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
    tables=("checkpoints", "writes"),
    insert="INSERT INTO {table} ({listed}) SELECT {chosen} FROM {table} WHERE thread_id = ? "
    "RETURNING 1",
    mark="?",
    metadata=f"CASE WHEN json_valid({_TEXT}) AND json_type({_TEXT}, '$.thread_id') IS NOT NULL "
    f"THEN CAST(json_set({_TEXT}, '$.thread_id', ?) AS BLOB) ELSE metadata END",
    counted=len,
)
