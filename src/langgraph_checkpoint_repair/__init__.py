"""Repair LangGraph threads whose history has tool calls without results.

The public names load on first use (PEP 562), so that `langgraph-repair --help` and the
package's lighter modules do not pay for LangGraph's graph runtime; `from
langgraph_checkpoint_repair import PatchingCheckpointer` works as with any package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy_exports import lazy_exports

if TYPE_CHECKING:  # the names as checkers see them; at run time, `__getattr__` below
    from .checkpointer import PatchingCheckpointer as PatchingCheckpointer
    from .checkpointer import RepairEvent as RepairEvent
    from .checkpointer import UnreadableCheckpoint as UnreadableCheckpoint
    from .engine import MARKER_KEY as MARKER_KEY
    from .engine import HistoryError as HistoryError
    from .engine import PendingCall as PendingCall
    from .engine import RepairAction as RepairAction
    from .engine import RepairPolicy as RepairPolicy
    from .engine import RepairResult as RepairResult
    from .engine import is_synthetic as is_synthetic
    from .engine import repair_messages as repair_messages
    from .in_run import CancelResult as CancelResult
    from .in_run import CannotCancel as CannotCancel
    from .in_run import acancel_pending_tool_calls as acancel_pending_tool_calls
    from .in_run import cancel_pending_tool_calls as cancel_pending_tool_calls
    from .in_run import pre_model_hook as pre_model_hook

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".checkpointer": ("PatchingCheckpointer", "RepairEvent", "UnreadableCheckpoint"),
        ".engine": (
            "MARKER_KEY",
            "HistoryError",
            "PendingCall",
            "RepairAction",
            "RepairPolicy",
            "RepairResult",
            "is_synthetic",
            "repair_messages",
        ),
        ".in_run": (
            "CancelResult",
            "CannotCancel",
            "acancel_pending_tool_calls",
            "cancel_pending_tool_calls",
            "pre_model_hook",
        ),
    },
)
