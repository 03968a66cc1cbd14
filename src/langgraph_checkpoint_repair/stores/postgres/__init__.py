"""The PostgreSQL driver, modelled on LangGraph's own `checkpoint-postgres`: the SQL and
the pure row logic in `base` (and, one job each, `values`, `rewrite_sql`, `shards`,
`chains`), thin sync (`sync`) and async (`aio`) stores over it. Opening a database
(`opening`), what a role needs (`privileges`) and LangGraph.js's threads in the same
tables (`js_saver`, `js_store`) live here too: they are SQL over the same tables and
connections. What a page's rows say is the first look's (`first_look.page`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .aio import AsyncPostgresStore as AsyncPostgresStore
    from .js_store import AsyncJsPostgresStore as AsyncJsPostgresStore
    from .js_store import JsPostgresStore as JsPostgresStore
    from .sync import PostgresStore as PostgresStore

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".sync": ("PostgresStore",),
        ".aio": ("AsyncPostgresStore",),
        ".js_store": ("AsyncJsPostgresStore", "JsPostgresStore"),
    },
)
