"""Loads whose bytes are wrong: undecodable values, lost types, U+0000 for PostgreSQL.

`LoadGuard` runs each inner load under watch (`decoding.watch`). A decode failure
becomes `UnreadableCheckpoint`, naming where it sits (found by rereading leniently,
only then); any other error passes through as it was. A lost type is logged and
counted, or raised, as the policy says. Over a PostgreSQL saver, a pending write
whose value is text holding U+0000 is scrubbed, so the put that resumes it can store it.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..codes import LostTypes
from ..decoding.names import type_text
from ..decoding.nul import NUL, scrub_nul
from ..decoding.watch import LoadNotes, LostType, Undecodable, channels_naming, watching_load
from ..metrics import record_lost_types
from ..redact import one_line
from ..stores.drivers import family_of

logger = logging.getLogger("langgraph_checkpoint_repair")

SHOW_COMMAND = "langgraph-repair show TARGET --thread {thread}"
SOMEWHERE = "a stored value"


class UnreadableCheckpoint(ValueError):
    """A checkpoint that does not load: a stored value does not decode, or names a type
    that cannot be rebuilt here (with `RepairPolicy(lost_types="raise")`)."""

    def __init__(
        self,
        *,
        thread_id: str | None,
        checkpoint_ns: str | None,
        checkpoint_id: str | None,
        where: str,
        error: str,
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id
        self.where = where
        self.error = error
        thread = "?" if thread_id is None else shlex.quote(thread_id)
        super().__init__(
            f"checkpoint {checkpoint_id!r} of thread {thread_id!r} (namespace "
            f"{checkpoint_ns!r}) does not load: {where}: {error}; look at it with: "
            + SHOW_COMMAND.format(thread=thread)
        )

    def __reduce__(self) -> Any:
        return _rebuild, (self.thread_id, self.checkpoint_ns, self.checkpoint_id, self.where,
                          self.error)  # fmt: skip


def _rebuild(*fields: Any) -> UnreadableCheckpoint:
    thread_id, ns, checkpoint_id, where, error = fields
    return UnreadableCheckpoint(
        thread_id=thread_id, checkpoint_ns=ns, checkpoint_id=checkpoint_id, where=where,
        error=error,
    )  # fmt: skip


def scrubs_nul(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether the saver stores channel values inline in PostgreSQL's JSONB."""
    family = family_of(saver)
    return family is not None and family.json_values


Read = Callable[[], list[CheckpointTuple]]
ARead = Callable[[], Awaitable[list[CheckpointTuple]]]


class LoadGuard:
    """Runs the inner saver's loads under watch; see the module docstring."""

    def __init__(self, lost_types: LostTypes, scrub_nul: bool) -> None:
        self.lost_types = lost_types
        self.scrub_nul = scrub_nul

    def read(self, config: RunnableConfig | None, read: Read) -> list[CheckpointTuple]:
        """`read()`'s tuples, checked; a decode failure raised as `UnreadableCheckpoint`."""
        with watching_load() as notes:
            try:
                tuples = read()
            except Exception as error:
                failure = notes.caused(error)
                if failure is None:
                    raise
                raise self._unreadable(config, failure, _reread(read)) from error
        return [self._checked(tup, notes) for tup in tuples]

    async def aread(self, config: RunnableConfig | None, read: ARead) -> list[CheckpointTuple]:
        """The async twin of `read`."""
        with watching_load() as notes:
            try:
                tuples = await read()
            except Exception as error:
                failure = notes.caused(error)
                if failure is None:
                    raise
                raise self._unreadable(config, failure, await _areread(read)) from error
        return [self._checked(tup, notes) for tup in tuples]

    def _unreadable(
        self, config: RunnableConfig | None, failure: BaseException, reread: list[CheckpointTuple]
    ) -> UnreadableCheckpoint:
        for tup in reread:
            where = _where_undecodable(tup)
            if where is not None:
                return _error_for(tup.config, where, one_line(failure))
        return _error_for(config, SOMEWHERE, one_line(failure))

    def _checked(self, tup: CheckpointTuple, notes: LoadNotes) -> CheckpointTuple:
        lost = [found for found in notes.lost if _holds(tup, found.value)]
        if lost:
            self._lost(tup, lost)
        return _scrubbed(tup) if self.scrub_nul else tup

    def _lost(self, tup: CheckpointTuple, lost: list[LostType]) -> None:
        if self.lost_types == "raise":
            first = lost[0]
            error = f"type {type_text(first.type)} cannot be rebuilt here ({first.reason})"
            raise _error_for(tup.config, _where_lost(tup, first), error)
        names = sorted({type_text(found.type) for found in lost})
        thread_id, ns, checkpoint_id = _ids(tup.config)
        logger.warning(
            "lost type %s in thread %r (ns %r) checkpoint %r: it cannot be rebuilt here (%s); "
            "LangGraph hands back its stored data instead",
            ", ".join(names), thread_id, ns, checkpoint_id, lost[0].reason,
        )  # fmt: skip
        record_lost_types("load", len(names))


def _reread(read: Read) -> list[CheckpointTuple]:
    """The same load again, each value that does not decode standing as `Undecodable`;
    nothing when even that fails."""
    with watching_load(lenient=True):
        try:
            return read()
        except Exception:
            return []


async def _areread(read: ARead) -> list[CheckpointTuple]:
    with watching_load(lenient=True):
        try:
            return await read()
        except Exception:
            return []


def _ids(config: RunnableConfig | None) -> tuple[str | None, str | None, str | None]:
    configurable = (config or {}).get("configurable", {})
    return (
        configurable.get("thread_id"),
        configurable.get("checkpoint_ns", ""),
        configurable.get("checkpoint_id"),
    )


def _error_for(config: RunnableConfig | None, where: str, error: str) -> UnreadableCheckpoint:
    thread_id, ns, checkpoint_id = _ids(config)
    return UnreadableCheckpoint(
        thread_id=thread_id, checkpoint_ns=ns, checkpoint_id=checkpoint_id, where=where,
        error=error,
    )  # fmt: skip


def _places(tup: CheckpointTuple) -> Iterator[tuple[str, Any]]:
    """Where each stored value of a loaded tuple sits, and the value."""
    yield "the checkpoint", tup.checkpoint
    values = tup.checkpoint.get("channel_values", {}) if isinstance(tup.checkpoint, dict) else {}
    for channel, value in values.items():
        yield f"channel {channel!r}", value
    for task_id, channel, value in tup.pending_writes or ():
        yield f"pending write of task {task_id!r} to channel {channel!r}", value


def _where_undecodable(tup: CheckpointTuple) -> str | None:
    for where, value in _places(tup):
        if isinstance(value, Undecodable):
            return where
    return None


def _where_lost(tup: CheckpointTuple, lost: LostType) -> str:
    """The channel or pending write whose value named the lost type; for a checkpoint
    stored whole (SQLite), the channels whose bytes name it."""
    for where, held in reversed(list(_places(tup))):
        if held is not lost.value:
            continue
        if held is not tup.checkpoint:
            return str(where)
        channels = channels_naming(lost.blob, lost.type)
        return ", ".join(f"channel {name!r}" for name in channels) or str(where)
    return SOMEWHERE


def _holds(tup: CheckpointTuple, value: Any) -> bool:
    return any(held is value for _, held in _places(tup))


def _scrubbed(tup: CheckpointTuple) -> CheckpointTuple:
    """The tuple with U+0000 in its text pending writes replaced by U+FFFD."""
    writes: Sequence[tuple[str, str, Any]] = tup.pending_writes or ()
    if not any(isinstance(value, str) and NUL in value for _, _, value in writes):
        return tup
    clean = [(task, channel, _scrub_text(value)) for task, channel, value in writes]
    thread_id, ns, checkpoint_id = _ids(tup.config)
    logger.info(
        "scrubbed U+0000 from pending writes of thread %r (ns %r) checkpoint %r on load: "
        "PostgreSQL cannot store it",
        thread_id, ns, checkpoint_id,
    )  # fmt: skip
    return tup._replace(pending_writes=clean)


def _scrub_text(value: Any) -> Any:
    return scrub_nul(value) if isinstance(value, str) else value
