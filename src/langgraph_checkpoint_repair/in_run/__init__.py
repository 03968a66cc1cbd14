"""The engine inside a running graph: cancel pending tool calls, repair before each model call."""

from .cancel import acancel_pending_tool_calls, cancel_pending_tool_calls
from .cancel_plan import CancelResult, CannotCancel
from .hook import pre_model_hook

__all__ = [
    "CancelResult",
    "CannotCancel",
    "acancel_pending_tool_calls",
    "cancel_pending_tool_calls",
    "pre_model_hook",
]
