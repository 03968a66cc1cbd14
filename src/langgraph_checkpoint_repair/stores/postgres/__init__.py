"""The PostgreSQL fast path: shared SQL and logic in `base`, sync and async shells."""

from .aio import AsyncPostgresStore
from .sync import PostgresStore

__all__ = ["AsyncPostgresStore", "PostgresStore"]
