"""The SQLite driver: LangGraph's SQLite savers' tables (`base` holds the SQL and the
pure row logic, `sync` and `aio` the stores), the files they live in (`files`),
LangGraph.js's threads in them (`js_saver`), writes rewritten in place
(`rewrites`), stored values (`values`) and the parent-chain check (`chains`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .aio import AsyncSqliteStore as AsyncSqliteStore
    from .sync import SqliteStore as SqliteStore

__all__, __getattr__, __dir__ = lazy_exports(
    __name__, {".sync": ("SqliteStore",), ".aio": ("AsyncSqliteStore",)}
)
