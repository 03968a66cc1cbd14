"""Repair LangGraph threads whose history has tool calls without results."""

from .checkpointer import PatchingCheckpointer, RepairEvent, UnreadableCheckpoint
from .engine import (
    MARKER_KEY,
    HistoryError,
    PendingCall,
    RepairAction,
    RepairPolicy,
    RepairResult,
    is_synthetic,
    repair_messages,
)
from .in_run import (
    CancelResult,
    CannotCancel,
    acancel_pending_tool_calls,
    cancel_pending_tool_calls,
    pre_model_hook,
)

__all__ = [
    "MARKER_KEY",
    "CancelResult",
    "CannotCancel",
    "HistoryError",
    "PatchingCheckpointer",
    "PendingCall",
    "RepairAction",
    "RepairEvent",
    "RepairPolicy",
    "RepairResult",
    "UnreadableCheckpoint",
    "acancel_pending_tool_calls",
    "cancel_pending_tool_calls",
    "is_synthetic",
    "pre_model_hook",
    "repair_messages",
]
