"""Which pruner deletes a saver's rows: PostgreSQL's and SQLite's tables are pruned row by
row; a saver reached only through its API cannot be, since `BaseCheckpointSaver` has no
per-checkpoint delete."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Literal, overload

from langgraph.checkpoint.base import BaseCheckpointSaver

from .drivers import driver_for, driver_of_class, stored_saver, talks_async

PRUNERS = {
    "postgres": (".postgres.prune:PostgresPruner", ".postgres.aprune:AsyncPostgresPruner"),
    "js-postgres": (".postgres.prune:PostgresPruner", ".postgres.aprune:AsyncPostgresPruner"),
    "sqlite": (".sqlite.prune:SqlitePruner", ".sqlite.aprune:AsyncSqlitePruner"),
}
"""Each driver's sync and async pruner classes."""
NO_PRUNER = (
    "prune deletes rows of PostgreSQL and SQLite stores; {name} is reached only through "
    "its API, which has no per-checkpoint delete"
)
NOT_ON_REDIS = (
    "prune, forget and rollback delete rows of PostgreSQL and SQLite stores only: a Redis "
    "store is scanned and repaired (and repairs undone), and nothing in it is deleted"
)


class CannotPrune(ValueError):
    """The saver's store has no pruner; one line."""


def can_prune(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether a pruner deletes the rows of the store holding `saver`'s data."""
    return prunes_class(type(stored_saver(saver)))


def prunes_class(cls: type) -> bool:
    """`can_prune`, told from the saver's class alone."""
    return driver_of_class(cls).name in PRUNERS


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
    driver = driver_for(saver).name
    paths = PRUNERS.get(driver)
    if paths is None:
        if required:
            shown = type(saver).__name__
            raise CannotPrune(NOT_ON_REDIS if driver == "redis" else NO_PRUNER.format(name=shown))
        return None
    module, _, name = paths[asynchronous].partition(":")
    return getattr(import_module(module, __package__), name)(saver)
