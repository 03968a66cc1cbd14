"""A PostgreSQL checkpoint's values as stored (the integrity findings), and the `types`
inventory's pages: the SQL both PostgreSQL stores share (rows as `stored_values` reads
them)."""

from __future__ import annotations

from typing import Any

VALUES_SQL = """
SELECT b.channel, b.type, b.blob, NULL::text AS task_id, NULL::integer AS idx
FROM checkpoints c
CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v (channel, version)
JOIN checkpoint_blobs b
    ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
    AND b.channel = v.channel AND b.version = v.version
WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
    AND c.checkpoint_id = %(checkpoint_id)s
UNION ALL
SELECT w.channel, w.type, w.blob, w.task_id, w.idx
FROM checkpoint_writes w
WHERE w.thread_id = %(thread_id)s AND w.checkpoint_ns = %(checkpoint_ns)s
    AND w.checkpoint_id = %(checkpoint_id)s
ORDER BY 4 NULLS FIRST, 1, 5"""


# The `types` inventory: every msgpack value of each head (its channels at their
# versions, its pending writes), a page of heads at a time; or with the whole history,
# every value of a page of threads.
HEAD_TYPES_SQL = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns)
        thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
    FROM checkpoints
    WHERE {where}
    ORDER BY thread_id DESC, checkpoint_ns DESC, checkpoint_id DESC
    LIMIT %(page)s
)
SELECT h.thread_id, h.checkpoint_ns, x.blob
FROM heads h
LEFT JOIN LATERAL (
    SELECT b.blob
    FROM jsonb_each_text(h.versions) AS v (channel, version)
    JOIN checkpoint_blobs b
        ON b.thread_id = h.thread_id AND b.checkpoint_ns = h.checkpoint_ns
        AND b.channel = v.channel AND b.version = v.version
    WHERE b.type = 'msgpack'
    UNION ALL
    SELECT w.blob
    FROM checkpoint_writes w
    WHERE w.thread_id = h.thread_id AND w.checkpoint_ns = h.checkpoint_ns
        AND w.checkpoint_id = h.checkpoint_id AND w.type = 'msgpack'
) x ON TRUE
ORDER BY h.thread_id DESC, h.checkpoint_ns DESC"""

THREAD_TYPES_SQL = """
WITH threads AS (
    SELECT DISTINCT thread_id FROM checkpoints
    WHERE {where}
    ORDER BY thread_id DESC
    LIMIT %(page)s
)
SELECT t.thread_id, '' AS checkpoint_ns, x.blob
FROM threads t
LEFT JOIN LATERAL (
    SELECT b.blob FROM checkpoint_blobs b
    WHERE b.thread_id = t.thread_id AND b.type = 'msgpack'
    UNION ALL
    SELECT w.blob FROM checkpoint_writes w
    WHERE w.thread_id = t.thread_id AND w.type = 'msgpack'
) x ON TRUE
ORDER BY t.thread_id DESC"""


_AFTER_HEAD = "(thread_id, checkpoint_ns) < (%(after_thread)s, %(after_ns)s)"


def types_query(
    after: tuple[str, str] | None, all_checkpoints: bool, page_size: int
) -> tuple[str, dict[str, Any]]:
    """One page of the inventory's rows (thread, namespace, blob) after the cursor."""
    params: dict[str, Any] = {"page": page_size}
    if all_checkpoints:
        where = "TRUE" if after is None else "thread_id < %(after_thread)s"
        sql = THREAD_TYPES_SQL
    else:
        where = "TRUE" if after is None else _AFTER_HEAD
        sql = HEAD_TYPES_SQL
    if after is not None:
        params.update(after_thread=after[0], after_ns=after[1])
    return sql.format(where=where), params
