"""Which pruner deletes a saver's rows: PostgreSQL's and SQLite's tables are pruned row by
row; a saver reached only through its API cannot be, since `BaseCheckpointSaver` has no
per-checkpoint delete."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Literal, overload

from langgraph.checkpoint.base import BaseCheckpointSaver

from .drivers import SAVERS, driver_for, stored_saver

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


class CannotPrune(ValueError):
    """The saver's store has no pruner; one line."""


def can_prune(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether a pruner deletes the rows of the store holding `saver`'s data."""
    return driver_for(stored_saver(saver)).name in PRUNERS


def is_async(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether the saver holding `saver`'s data talks to its database asynchronously (an
    async saver class of LangGraph's, or one built on it)."""
    for base in type(stored_saver(saver)).__mro__:
        if base.__module__ in SAVERS:
            return base.__module__.endswith(".aio")
    return False


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
    paths = PRUNERS.get(driver_for(saver).name)
    if paths is None:
        if required:
            raise CannotPrune(NO_PRUNER.format(name=type(saver).__name__))
        return None
    module, _, name = paths[asynchronous].partition(":")
    return getattr(import_module(module, __package__), name)(saver)
