"""Repair LangGraph threads whose history has tool calls without results."""

from .checkpointer import PatchingCheckpointer, RepairEvent
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

__all__ = [
    "MARKER_KEY",
    "HistoryError",
    "PatchingCheckpointer",
    "PendingCall",
    "RepairAction",
    "RepairEvent",
    "RepairPolicy",
    "RepairResult",
    "is_synthetic",
    "repair_messages",
]
