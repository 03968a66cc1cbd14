"""Which pruner deletes a saver's rows: PostgreSQL's and SQLite's tables are pruned row by
row, RedisSaver's keys key by key; a saver reached only through its API cannot be, since
`BaseCheckpointSaver` has no per-checkpoint delete."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Literal, overload

from langgraph.checkpoint.base import BaseCheckpointSaver

from .drivers import driver_of_class, stored_saver, talks_async

PRUNERS = {
    "postgres": (".postgres.prune:PostgresPruner", ".postgres.aprune:AsyncPostgresPruner"),
    "js-postgres": (".postgres.prune:PostgresPruner", ".postgres.aprune:AsyncPostgresPruner"),
    "sqlite": (".sqlite.prune:SqlitePruner", ".sqlite.aprune:AsyncSqlitePruner"),
    "redis": (".redis.prune:RedisPruner", ".redis.aprune:AsyncRedisPruner"),
    "redis-js": (".redis.js_prune:JsRedisPruner", ".redis.js_prune:AsyncJsRedisPruner"),
}
"""Each driver's sync and async pruner classes."""
NO_PRUNER = (
    "prune deletes rows of PostgreSQL, SQLite and Redis stores; {name} is reached only "
    "through its API, which has no per-checkpoint delete"
)
REDIS_SAVERS = frozenset(
    {
        ("langgraph.checkpoint.redis", "RedisSaver"),
        ("langgraph.checkpoint.redis.aio", "AsyncRedisSaver"),
    }
)
"""langgraph-checkpoint-redis's savers of the full layout, which a scan reads through
their API and the Redis pruner prunes key by key (its shallow savers keep one
checkpoint a thread: nothing to prune)."""
WRITES = ("put", "aput", "put_writes", "aput_writes")
PRUNES_ONLY = {"redis": ("prune", "aprune"), "redis-js": ("prune", "aprune")}
"""What the wrapper offers of its own over a store whose pruner does not copy threads
or take runs back."""


SHALLOW = (
    "a shallow Redis store keeps one checkpoint a thread: prune has nothing to delete "
    "there (its savers replace the document at every step)"
)


class CannotPrune(ValueError):
    """The saver's store has no pruner; one line."""


def can_prune(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether a pruner deletes the rows of the store holding `saver`'s data."""
    return prunes_class(type(stored_saver(saver)))


def prunes_class(cls: type, method: str = "prune") -> bool:
    """`can_prune`, told from the saver's class alone; with `method`, whether its pruner
    does what the wrapper's `method` asks."""
    name = pruned_as(cls)
    return name is not None and method in PRUNES_ONLY.get(name, (method,))


def pruned_as(cls: type) -> str | None:
    """The pruner of a saver class: its driver's, or Redis's for a class built on one of
    the Redis savers that stores as it does; None for a store no pruner deletes in."""
    name = driver_of_class(cls).name
    if name in PRUNERS:
        return name
    for base in cls.__mro__:
        if (base.__module__, base.__qualname__) in REDIS_SAVERS:
            same = all(getattr(cls, m, None) is getattr(base, m, None) for m in WRITES)
            return "redis" if same else None
    return None


def is_async(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether the saver holding `saver`'s data talks to its database asynchronously:
    it is built on one of LangGraph's async saver classes (an application's or this
    package's own subclass included, wherever its module is)."""
    return talks_async(type(stored_saver(saver)))


@overload
def pruner_for(saver: BaseCheckpointSaver[Any], *, asynchronous: bool = False) -> Any: ...
@overload
def pruner_for(
    saver: BaseCheckpointSaver[Any], required: Literal[False], *, asynchronous: bool = False
) -> Any | None: ...
def pruner_for(
    saver: BaseCheckpointSaver[Any], required: bool = True, *, asynchronous: bool = False
) -> Any | None:
    """The (sync or async) pruner over the tables holding `saver`'s data; `CannotPrune`
    (or None, when not `required`) for a store it cannot delete rows of."""
    saver = stored_saver(saver)
    name = pruned_as(type(saver))
    if name is None:
        if required:
            driver = driver_of_class(type(saver)).name
            shown = NO_PRUNER.format(name=type(saver).__name__)
            raise CannotPrune(SHALLOW if driver == "redis-shallow" else shown)
        return None
    module, _, attr = PRUNERS[name][asynchronous].partition(":")
    return getattr(import_module(module, __package__), attr)(saver)
