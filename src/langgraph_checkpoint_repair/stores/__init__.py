"""Thread stores for the batch job: PostgreSQL fast path, SQLite, any saver."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from .base import AsyncThreadStore, Head, RepairEntry, Selection, StoreNotReady, ThreadStore
from .generic import AsyncGenericStore, GenericStore

KINDS = {
    "langgraph.checkpoint.postgres": "postgres",
    "langgraph.checkpoint.postgres.aio": "postgres",
    "langgraph.checkpoint.sqlite": "sqlite",
    "langgraph.checkpoint.sqlite.aio": "sqlite",
    "langgraph_checkpoint_repair.js.saver": "js-postgres",
    "langgraph_checkpoint_repair.js.sqlite_saver": "sqlite",
}
STORAGE_METHODS = ("get_tuple", "aget_tuple", "list", "alist", "put", "aput")


def _kind(saver: BaseCheckpointSaver[Any]) -> str:
    """Which fast path understands this saver's tables: "postgres" (or "js-postgres",
    LangGraph's saver taught LangGraph.js's threads), "sqlite" or "generic".

    A subclass of LangGraph's PostgreSQL or SQLite saver takes the fast path (with its
    lock) as long as it stores and loads as its base class does; one that overrides
    how it stores or loads is driven through its own methods, as any saver.
    """
    cls = type(saver)
    for base in cls.__mro__:
        kind = KINDS.get(base.__module__)
        if kind is not None:
            same = all(getattr(cls, m, None) is getattr(base, m, None) for m in STORAGE_METHODS)
            return kind if same else "generic"
    return "generic"


def stored_saver(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """The saver that holds the data: a wrapper (e.g. PatchingCheckpointer, whose
    loads show a repaired view) is looked through, so a run sees what is stored."""
    inner = getattr(saver, "saver", None)
    return stored_saver(inner) if isinstance(inner, BaseCheckpointSaver) else saver


def store_for(saver: BaseCheckpointSaver[Any]) -> ThreadStore:
    """The fastest sync store that understands the saver holding `saver`'s data."""
    saver = stored_saver(saver)
    kind = _kind(saver)
    if kind == "js-postgres":
        from .js_store import JsPostgresStore

        return JsPostgresStore(saver)
    if kind == "postgres":
        from .postgres import PostgresStore

        return PostgresStore(saver)
    if kind == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(saver)
    return GenericStore(saver)


def astore_for(saver: BaseCheckpointSaver[Any]) -> AsyncThreadStore:
    """The fastest async store that understands the saver holding `saver`'s data."""
    saver = stored_saver(saver)
    kind = _kind(saver)
    if kind == "js-postgres":
        from .js_store import AsyncJsPostgresStore

        return AsyncJsPostgresStore(saver)
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
    "stored_saver",
]
