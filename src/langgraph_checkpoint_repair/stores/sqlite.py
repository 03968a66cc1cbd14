"""SQLite (the embedded default): heads found by SQL, everything else through the saver."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from .base import Head, Selection
from .generic import AsyncGenericStore, GenericStore

HEADS_SQL = """
SELECT thread_id, checkpoint_ns, MAX(checkpoint_id)
FROM checkpoints
WHERE (thread_id, checkpoint_ns) > (?, ?)
GROUP BY thread_id, checkpoint_ns
ORDER BY thread_id, checkpoint_ns
LIMIT ?
"""
HEAD_ID_SQL = "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
THREADS_SQL = "SELECT thread_id FROM checkpoints GROUP BY thread_id, checkpoint_ns"


def _counted(rows: list[Any], selection: Selection) -> int:
    return sum(1 for (thread_id,) in rows if selection.takes(str(thread_id)))


def _selected(rows: list[Any], selection: Selection) -> list[Head]:
    return [Head(str(t), str(ns), str(cid)) for t, ns, cid in rows if selection.takes(str(t))]


class SqliteStore(GenericStore):
    """SqliteSaver: keyset-paged SQL finds the head of each (thread, namespace)."""

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        after: tuple[str, str] = ("", "")
        while True:
            with self.saver.lock:  # type: ignore[attr-defined]
                rows = self.saver.conn.execute(HEADS_SQL, (*after, selection.page_size)).fetchall()  # type: ignore[attr-defined]
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            yield _selected(rows, selection)

    def count_heads(self, selection: Selection) -> int | None:
        with self.saver.lock:  # type: ignore[attr-defined]
            rows = self.saver.conn.execute(THREADS_SQL).fetchall()  # type: ignore[attr-defined]
        return _counted(rows, selection)

    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        with self.saver.lock:  # type: ignore[attr-defined]
            row = self.saver.conn.execute(HEAD_ID_SQL, (thread_id, checkpoint_ns)).fetchone()  # type: ignore[attr-defined]
        return None if row is None else row[0]


class AsyncSqliteStore(AsyncGenericStore):
    """AsyncSqliteSaver: the twin of `SqliteStore`."""

    async def pages(self, selection: Selection) -> AsyncIterator[list[Head]]:
        after: tuple[str, str] = ("", "")
        while True:
            async with self.saver.lock:  # type: ignore[attr-defined]
                cursor = await self.saver.conn.execute(HEADS_SQL, (*after, selection.page_size))  # type: ignore[attr-defined]
                rows = list(await cursor.fetchall())
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            yield _selected(rows, selection)

    async def count_heads(self, selection: Selection) -> int | None:
        async with self.saver.lock:  # type: ignore[attr-defined]
            cursor = await self.saver.conn.execute(THREADS_SQL)  # type: ignore[attr-defined]
            rows = list(await cursor.fetchall())
        return _counted(rows, selection)

    async def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        async with self.saver.lock:  # type: ignore[attr-defined]
            cursor = await self.saver.conn.execute(HEAD_ID_SQL, (thread_id, checkpoint_ns))  # type: ignore[attr-defined]
            row = await cursor.fetchone()
        return None if row is None else row[0]
