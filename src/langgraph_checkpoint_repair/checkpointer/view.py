"""The repaired view of one checkpoint tuple: shared by every load method, sync and async."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import CheckpointTuple

from ..delta import as_snapshot, is_snapshot, snapshot_value
from ..delta.channels import with_values
from ..engine import HistoryError, RepairAction, RepairPolicy, repair_messages
from ..in_flight import work_is_scheduled
from ..metrics import record_repairs

logger = logging.getLogger("langgraph_checkpoint_repair")

_REMEMBERED_CHECKPOINTS = 10_000


@dataclass(frozen=True)
class RepairEvent:
    """One loaded checkpoint whose message channels were repaired in the returned view."""

    thread_id: str | None
    checkpoint_ns: str
    checkpoint_id: str | None
    actions: Mapping[str, tuple[RepairAction, ...]]
    """Channel name -> the engine's actions on it."""


OnRepair = Callable[[RepairEvent], None]


class LoadRepairer:
    """Repairs the message channels of loaded checkpoints; never raises on odd data."""

    def __init__(
        self,
        policy: RepairPolicy,
        channels: Collection[str] | None,
        on_repair: OnRepair | None,
    ) -> None:
        self.policy = policy
        self.channels = tuple(channels) if channels is not None else None
        self.on_repair = on_repair
        self._logged: OrderedDict[tuple[str, ...], None] = OrderedDict()

    def repair(
        self, tup: CheckpointTuple | None, rebuilt: Collection[str] = ()
    ) -> CheckpointTuple | None:
        """The tuple with repaired message channels; the same object when nothing changes.

        `rebuilt` names the delta channels rebuilt for this load (held as
        `_DeltaSnapshot`s): they are handed to LangGraph as plain lists, which it
        uses as they are instead of walking the ancestors again.
        """
        if tup is None:
            return None
        try:
            return _as_plain_lists(self._repair(tup), rebuilt)
        except HistoryError:
            raise
        except Exception:
            if self._first_time("failed", tup):
                logger.exception("could not repair checkpoint %s; returned as stored", where(tup))
            return _as_plain_lists(tup, rebuilt)

    def rebuild_failed(self, tup: CheckpointTuple) -> None:
        """Log (once per checkpoint) that a delta channel could not be rebuilt here."""
        if self._first_time("rebuild", tup):
            logger.exception(
                "could not rebuild delta channels of checkpoint %s; left to LangGraph", where(tup)
            )

    def _repair(self, tup: CheckpointTuple) -> CheckpointTuple:
        values = tup.checkpoint["channel_values"]
        names = self._message_channels(values)
        if not names:
            return tup
        in_flight = work_is_scheduled(tup)
        repaired: dict[str, Any] = {}
        actions: dict[str, tuple[RepairAction, ...]] = {}
        for name in names:
            stored = values[name]
            history = snapshot_value(stored)
            result = repair_messages(history, policy=self.policy, in_flight=in_flight)
            if result.changed:
                fixed = result.messages
                repaired[name] = as_snapshot(fixed) if is_snapshot(stored) else fixed
                actions[name] = result.actions
        if not repaired:
            return tup
        self._report(tup, actions)
        return with_values(tup, repaired)

    def _message_channels(self, values: Mapping[str, Any]) -> list[str]:
        if self.channels is not None:
            return [
                name for name in self.channels if isinstance(snapshot_value(values.get(name)), list)
            ]
        return [name for name, value in values.items() if _holds_messages(snapshot_value(value))]

    def _report(self, tup: CheckpointTuple, actions: dict[str, tuple[RepairAction, ...]]) -> None:
        level = logging.INFO if self._first_time("repaired", tup) else logging.DEBUG
        summary = {
            name: [f"{a.kind}:{a.tool_call_id}" for a in acts] for name, acts in actions.items()
        }
        logger.log(level, "repaired checkpoint %s on load: %s", where(tup), summary)
        record_repairs("load", actions)
        if self.on_repair is None:
            return
        configurable = tup.config.get("configurable", {})
        event = RepairEvent(
            configurable.get("thread_id"),
            configurable.get("checkpoint_ns", ""),
            configurable.get("checkpoint_id"),
            actions,
        )
        try:
            self.on_repair(event)
        except Exception:
            logger.exception("on_repair callback failed for checkpoint %s", where(tup))

    def _first_time(self, what: str, tup: CheckpointTuple) -> bool:
        """Remember (boundedly) which checkpoints were already logged, to log each once."""
        key = (what, *_key(tup))
        if key in self._logged:
            return False
        self._logged[key] = None
        if len(self._logged) > _REMEMBERED_CHECKPOINTS:
            self._logged.popitem(last=False)
        return True


def _as_plain_lists(tup: CheckpointTuple, names: Collection[str]) -> CheckpointTuple:
    if not names:
        return tup
    values = tup.checkpoint["channel_values"]
    return with_values(tup, {name: snapshot_value(values[name]) for name in names})


def _holds_messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], BaseMessage)


def _key(tup: CheckpointTuple) -> tuple[str, str, str]:
    configurable = tup.config.get("configurable", {})
    return (
        str(configurable.get("thread_id")),
        str(configurable.get("checkpoint_ns", "")),
        str(configurable.get("checkpoint_id")),
    )


def where(tup: CheckpointTuple) -> str:
    """The checkpoint's place, for a log line: ids quoted, as they may hold newlines."""
    thread_id, ns, checkpoint_id = _key(tup)
    return f"thread={thread_id!r} ns={ns!r} checkpoint={checkpoint_id!r}"  # ids may hold newlines
