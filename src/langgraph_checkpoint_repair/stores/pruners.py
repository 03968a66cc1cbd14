"""Which pruner deletes a saver's rows: PostgreSQL's and SQLite's tables are pruned row by
row; a saver reached only through its API cannot be, since `BaseCheckpointSaver` has no
per-checkpoint delete."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Literal, overload

from langgraph.checkpoint.base import BaseCheckpointSaver

from .drivers import driver_for, stored_saver

PRUNERS = {
    "postgres": ".postgres.prune:PostgresPruner",
    "js-postgres": ".postgres.prune:PostgresPruner",
    "sqlite": ".sqlite.prune:SqlitePruner",
}
NO_PRUNER = (
    "prune deletes rows of PostgreSQL and SQLite stores; {name} is reached only through "
    "its API, which has no per-checkpoint delete"
)


class CannotPrune(ValueError):
    """The saver's store has no pruner; one line."""


@overload
def pruner_for(saver: BaseCheckpointSaver[Any]) -> Any: ...
@overload
def pruner_for(saver: BaseCheckpointSaver[Any], required: Literal[False]) -> Any | None: ...
def pruner_for(saver: BaseCheckpointSaver[Any], required: bool = True) -> Any | None:
    """The pruner over the tables holding `saver`'s data; `CannotPrune` (or None, when not
    `required`) for a store it cannot delete rows of."""
    saver = stored_saver(saver)
    path = PRUNERS.get(driver_for(saver).name)
    if path is None:
        if required:
            raise CannotPrune(NO_PRUNER.format(name=type(saver).__name__))
        return None
    module, _, name = path.partition(":")
    return getattr(import_module(module, __package__), name)(saver)
