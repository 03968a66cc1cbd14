"""Whether a thread's parent chain ends (`delta.chains`), asked of a PostgreSQL saver's
own connection from ids alone, before LangGraph walks it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...delta.chains import raise_if_found

# PostgreSQL plans a plain join as a scan of the thread's rows per step (quadratic in the
# chain's length) when its statistics call the thread small; a LATERAL lookup kept apart
# by OFFSET 0 is one primary-key probe per step whatever they say.
CHAIN_SQL = """
WITH RECURSIVE chain (id, parent, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, 0 FROM checkpoints
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s
        AND checkpoint_id = COALESCE(%(id)s, (
            SELECT max(checkpoint_id) FROM checkpoints
            WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s))
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1
    FROM chain CROSS JOIN LATERAL (
        SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints
        WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s
            AND checkpoint_id = chain.parent
        OFFSET 0) c
    WHERE c.checkpoint_id < chain.id AND chain.depth < %(limit)s
)
SELECT id, parent, depth FROM chain
WHERE parent IS NOT NULL AND (parent >= id OR depth >= %(limit)s)
LIMIT 1"""
"""The first link that breaks the order, or the end of a chain too long; no row when
the chain ends."""


def check_chain(saver: Any, where: dict[str, Any]) -> None:
    with saver._cursor() as cursor:
        cursor.execute(CHAIN_SQL, where)
        raise_if_found(_as_row(cursor.fetchone()))


async def acheck_chain(saver: Any, where: dict[str, Any]) -> None:
    async with saver._cursor() as cursor:
        await cursor.execute(CHAIN_SQL, where)
        raise_if_found(_as_row(await cursor.fetchone()))


def _as_row(row: Any) -> Any:
    """A dict row (LangGraph's savers use dict_row) as a tuple."""
    return tuple(row.values()) if isinstance(row, Mapping) else row
