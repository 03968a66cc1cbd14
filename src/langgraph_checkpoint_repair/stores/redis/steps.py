"""The steps a Redis pruner's work is written in: the sync and async pruners run the
same steps (`prune.RedisPruner`, `aprune.AsyncRedisPruner`), so only their I/O differs."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from redisvl.query import FilterQuery

T = TypeVar("T")
Command = tuple[Any, ...]
"""A client method's name and its positional arguments."""


@dataclass(frozen=True)
class Search:
    """Every document one of the saver's indexes matches, a page at a time."""

    index: Literal["checkpoints", "writes", "blobs"]
    query_at: Callable[[int], FilterQuery]


@dataclass(frozen=True)
class Read:
    """Commands run in one pipeline, outside any transaction; answered with their
    replies (an error reply as its exception)."""

    commands: Sequence[Command]


@dataclass(frozen=True)
class Watch:
    """Keys whose change before the next `Commit` makes it fail."""

    keys: Sequence[str]


@dataclass(frozen=True)
class Commit:
    """Commands run in one MULTI/EXEC; answered with their replies, or None when a
    watched key changed (nothing was run)."""

    commands: Sequence[Command]


Step = Search | Read | Watch | Commit
Steps = Generator[Step, Any, T]


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def read_replies(commands: list[Command]) -> Steps[list[Any]]:
    """One `Read`, as steps of their own."""
    replies: list[Any] = yield Read(commands)
    return replies


def parsed(reply: Any) -> Any:
    """A JSON.GET reply as data: the client hands back its JSON text, or, where redis-py's
    JSON callbacks are installed on it (`client.json()` installs them), the data."""
    if not isinstance(reply, (str, bytes)):
        return reply
    try:
        return json.loads(reply)
    except ValueError:
        return None
