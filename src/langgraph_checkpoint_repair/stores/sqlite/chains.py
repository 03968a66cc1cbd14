"""Whether a thread's parent chain ends (`delta.chains`), asked of a SQLite saver's own
connection from ids alone, before LangGraph walks it."""

from __future__ import annotations

from typing import Any

from ...delta.chains import raise_if_found

CHAIN_SQL = """
WITH RECURSIVE chain (id, parent, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, 0 FROM checkpoints
    WHERE thread_id = :thread_id AND checkpoint_ns = :ns
        AND checkpoint_id = COALESCE(:id, (
            SELECT max(checkpoint_id) FROM checkpoints
            WHERE thread_id = :thread_id AND checkpoint_ns = :ns))
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1
    FROM chain JOIN checkpoints c
        ON c.thread_id = :thread_id AND c.checkpoint_ns = :ns
        AND c.checkpoint_id = chain.parent AND c.checkpoint_id < chain.id
    WHERE chain.depth < :limit
)
SELECT id, parent, depth FROM chain
WHERE parent IS NOT NULL AND (parent >= id OR depth >= :limit)
LIMIT 1"""
"""The first link that breaks the order, or the end of a chain too long; no row when
the chain ends."""


def check_chain(saver: Any, where: dict[str, Any]) -> None:
    with saver.lock:
        raise_if_found(saver.conn.execute(CHAIN_SQL, where).fetchone())


async def acheck_chain(saver: Any, where: dict[str, Any]) -> None:
    async with saver.lock:
        cursor = await saver.conn.execute(CHAIN_SQL, where)
        raise_if_found(await cursor.fetchone())
