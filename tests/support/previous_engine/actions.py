"""The action types are the package's own (results compare equal across engines);
only the engine's fast builder is kept here as it was."""

from __future__ import annotations

from langgraph_checkpoint_repair.codes import ActionKind
from langgraph_checkpoint_repair.engine.actions import (
    HistoryError,
    RepairAction,
    RepairResult,
)

__all__ = ["ActionKind", "HistoryError", "RepairAction", "RepairResult", "fast_action"]

_new = object.__new__
_set = object.__setattr__


def fast_action(
    kind: ActionKind, call_id: str | None, name: str | None, index: int
) -> RepairAction:
    """`RepairAction(kind, call_id, name, index)`, built as the engine built it."""
    action: RepairAction = _new(RepairAction)
    _set(
        action,
        "__dict__",
        {"kind": kind, "tool_call_id": call_id, "tool_name": name, "index": index, "detail": None},
    )
    return action
