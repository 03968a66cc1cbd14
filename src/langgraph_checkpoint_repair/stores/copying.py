"""A thread copied inside its store (`acopy_thread`, the Agent Server's thread copy):
the steps every driver's sync and async shells run, each driver's SQL given in a
`CopySql` (its `copy_sql` module).

Every row of the thread (checkpoints, their pending writes, and on PostgreSQL its
blobs) is inserted again under the new thread id, as stored, in one transaction, so
the copy reads the same, delta channels and waiting questions included, and goes its
own way. Checkpoint metadata that names the thread (`thread_id`, as the Agent Server
keeps it) names the copy. A copy goes to a thread with no checkpoint yet.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class ThreadExists(ValueError):
    """The copy's thread already has checkpoints: a copy never mixes two threads."""

    def __init__(self, target: str) -> None:
        super().__init__(f"thread {target!r} already has checkpoints: a copy goes to a new thread")


@dataclass(frozen=True)
class CopySql:
    """A driver's statements for a copy."""

    taken: str
    """Any checkpoint of a thread (its id as the one parameter)."""
    tables: tuple[str, ...]
    insert: str
    """One table's rows of the source inserted again: `{table}`, `{listed}` (its
    columns) and `{chosen}` (what goes in each) filled in, the source's id last."""
    mark: str
    """The driver's placeholder."""
    metadata: str
    """The metadata renamed to the copy (one placeholder: the copy's id)."""
    counted: Callable[[list[Any]], int]
    """How many rows the insert put, from what it returned."""


def copy_steps(
    source: str, target: str, columns: Mapping[str, Sequence[str]], sql: CopySql
) -> Generator[tuple[str, Sequence[Any]], list[Any], int]:
    """Every row of `source` copied to `target`, table by table; the rows copied."""
    if (yield sql.taken, (target,)):
        raise ThreadExists(target)
    copied = 0
    for table in sql.tables:
        listed = list(columns[table])
        chosen = [_chosen(column, sql) for column in listed]
        named = sum(column in ("thread_id", "metadata") for column in listed)
        query = sql.insert.format(table=table, listed=", ".join(listed), chosen=", ".join(chosen))
        copied += sql.counted((yield query, (*[target] * named, source)))
    return copied


def _chosen(column: str, sql: CopySql) -> str:
    if column == "thread_id":
        return sql.mark
    return sql.metadata if column == "metadata" else column
