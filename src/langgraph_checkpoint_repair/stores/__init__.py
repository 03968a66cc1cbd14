"""Thread stores for the batch job: PostgreSQL fast path, SQLite, any saver."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from .base import AsyncThreadStore, Head, RepairEntry, Selection, StoreNotReady, ThreadStore
from .generic import AsyncGenericStore, GenericStore


def _kind(saver: BaseCheckpointSaver[Any]) -> str:
    """Which fast path understands this saver's tables: "postgres", "sqlite" or "generic"."""
    module = type(saver).__module__
    if module in ("langgraph.checkpoint.postgres", "langgraph.checkpoint.postgres.aio"):
        return "postgres"
    if module in ("langgraph.checkpoint.sqlite", "langgraph.checkpoint.sqlite.aio"):
        return "sqlite"
    return "generic"


def store_for(saver: BaseCheckpointSaver[Any]) -> ThreadStore:
    """The fastest sync store that understands `saver`."""
    kind = _kind(saver)
    if kind == "postgres":
        from .postgres import PostgresStore

        return PostgresStore(saver)
    if kind == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(saver)
    return GenericStore(saver)


def astore_for(saver: BaseCheckpointSaver[Any]) -> AsyncThreadStore:
    """The fastest async store that understands `saver`."""
    kind = _kind(saver)
    if kind == "postgres":
        from .postgres import AsyncPostgresStore

        return AsyncPostgresStore(saver)
    if kind == "sqlite":
        from .sqlite import AsyncSqliteStore

        return AsyncSqliteStore(saver)
    return AsyncGenericStore(saver)


__all__ = [
    "AsyncGenericStore",
    "AsyncThreadStore",
    "GenericStore",
    "Head",
    "RepairEntry",
    "Selection",
    "StoreNotReady",
    "ThreadStore",
    "astore_for",
    "store_for",
]
