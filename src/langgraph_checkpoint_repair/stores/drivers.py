"""Which driver reads a saver's tables: decided here, once, for every part of the package.

A driver is a folder of `stores` (`postgres`, `sqlite`, `generic`) holding all it knows
of its database: its SQL, its row mapping, its sync and async stores, and the check
that a thread's parent chain ends. A saver is matched by the classes it is built on:
the first one whose module is in `SAVERS` names its driver. A subclass takes its
base's driver as long as it stores and loads as its base does; one that overrides
how it stores or loads is driven through its own methods, as any saver (`generic`).

Adding a store is a folder, one line in `DRIVERS` and a line for each of its savers
in `SAVERS` (see the architecture page).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

if TYPE_CHECKING:
    from .base import AsyncThreadStore, ThreadStore


@dataclass(frozen=True)
class Driver:
    """A store driver: the folder under `stores` it lives in and its store classes."""

    name: str
    folder: str
    store: str
    """The sync store's class, in the folder's package."""
    astore: str
    """The async store's class."""
    json_values: bool = False
    """Whether channel values are stored inline in PostgreSQL's JSONB, which cannot
    hold U+0000 (the wrapper scrubs it from what such a saver is handed)."""

    def store_class(self, asynchronous: bool) -> Any:
        package = import_module(f".{self.folder}", __package__)
        return getattr(package, self.astore if asynchronous else self.store)

    def chains(self) -> Any:
        """The folder's `chains` module: the check that a parent chain ends."""
        return import_module(f".{self.folder}.chains", __package__)


DRIVERS = {
    "postgres": Driver("postgres", "postgres", "PostgresStore", "AsyncPostgresStore", True),
    "js-postgres": Driver(
        "js-postgres", "postgres", "JsPostgresStore", "AsyncJsPostgresStore", True
    ),
    "sqlite": Driver("sqlite", "sqlite", "SqliteStore", "AsyncSqliteStore"),
    "redis": Driver("redis", "redis", "RedisStore", "AsyncRedisStore"),
    "redis-shallow": Driver(
        "redis-shallow", "redis", "ShallowRedisStore", "AsyncShallowRedisStore"
    ),
    "redis-js": Driver("redis-js", "redis", "JsRedisStore", "AsyncJsRedisStore"),
    "generic": Driver("generic", "generic", "GenericStore", "AsyncGenericStore"),
}
"""Every driver, by name."""

SAVERS = {
    "langgraph.checkpoint.postgres": "postgres",
    "langgraph.checkpoint.postgres.aio": "postgres",
    "langgraph.checkpoint.sqlite": "sqlite",
    "langgraph.checkpoint.sqlite.aio": "sqlite",
    "langgraph.checkpoint.memory": "generic",
    "langgraph_checkpoint_repair.stores.postgres.js_saver": "js-postgres",
    "langgraph_checkpoint_repair.stores.sqlite.js_saver": "sqlite",
    "langgraph_checkpoint_repair.stores.redis.saver": "redis",
    "langgraph_checkpoint_repair.stores.redis.shallow_saver": "redis-shallow",
    "langgraph_checkpoint_repair.stores.redis.js_saver": "redis-js",
}
"""The module of each saver class a driver reads the tables of, by its driver's name."""

ASYNC_SAVERS = frozenset(
    {
        ("langgraph.checkpoint.postgres.aio", "AsyncPostgresSaver"),
        ("langgraph.checkpoint.sqlite.aio", "AsyncSqliteSaver"),
        ("langgraph.checkpoint.redis.aio", "AsyncRedisSaver"),
    }
)
"""LangGraph's async saver classes: a saver built on one talks to its database
asynchronously, whatever module its own class lives in."""


def talks_async(cls: type) -> bool:
    """Whether savers of `cls` are built on one of LangGraph's async saver classes."""
    return any((base.__module__, base.__qualname__) in ASYNC_SAVERS for base in cls.__mro__)


STORAGE_METHODS = ("get_tuple", "aget_tuple", "list", "alist", "put", "aput")


def family_of(saver: BaseCheckpointSaver[Any]) -> Driver | None:
    """The driver of the first known saver class `saver` is built on; None for a saver
    built on none of them."""
    for base in type(saver).__mro__:
        name = SAVERS.get(base.__module__)
        if name is not None:
            return DRIVERS[name]
    return None


def driver_for(saver: BaseCheckpointSaver[Any]) -> Driver:
    """The driver that reads `saver`'s tables: its family's, where it stores and loads as
    its family's saver class does; the generic driver otherwise."""
    return driver_of_class(type(saver))


def driver_of_class(cls: type) -> Driver:
    """`driver_for`, told from the saver's class alone (what a wrapper class offers is
    decided before any saver of it exists)."""
    for base in cls.__mro__:
        name = SAVERS.get(base.__module__)
        if name is not None:
            same = all(getattr(cls, m, None) is getattr(base, m, None) for m in STORAGE_METHODS)
            return DRIVERS[name] if same else DRIVERS["generic"]
    return DRIVERS["generic"]


def walk_owner(saver: BaseCheckpointSaver[Any], method: str) -> str:
    """Whose delta-channel history walk (`method`, the sync or async one) `saver` runs:
    the module of the class that defines it, or "" for the base class's default (a
    LangGraph without delta channels has none, and `stores.history` walks as it would)."""
    walk = getattr(type(saver), method, None)
    if walk is getattr(BaseCheckpointSaver, method, None):
        return ""  # however it got there: a class may name the base's walk as its own
    owner = next(c for c in type(saver).__mro__ if method in vars(c))
    return owner.__module__


def stored_saver(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """The saver that holds the data: a wrapper (e.g. PatchingCheckpointer, whose
    loads show a repaired view) is looked through, so a run sees what is stored."""
    inner = getattr(saver, "saver", None)
    return stored_saver(inner) if isinstance(inner, BaseCheckpointSaver) else saver


def store_for(saver: BaseCheckpointSaver[Any]) -> ThreadStore:
    """The fastest sync store that understands the saver holding `saver`'s data."""
    saver = stored_saver(saver)
    store: ThreadStore = driver_for(saver).store_class(asynchronous=False)(saver)
    return store


def astore_for(saver: BaseCheckpointSaver[Any]) -> AsyncThreadStore:
    """The fastest async store that understands the saver holding `saver`'s data."""
    saver = stored_saver(saver)
    store: AsyncThreadStore = driver_for(saver).store_class(asynchronous=True)(saver)
    return store
