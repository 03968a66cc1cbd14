"""The pure repair engine: rules, policy and actions. It does no I/O."""

from ..codes import ActionKind
from .actions import HistoryError, RepairAction, RepairResult
from .policy import DEFAULT_TEXTS, PROVIDERS, PendingCall, Provider, RepairPolicy
from .repair import repair_messages
from .synthetic import MARKER_KEY, is_synthetic

__all__ = [
    "DEFAULT_TEXTS",
    "MARKER_KEY",
    "PROVIDERS",
    "ActionKind",
    "HistoryError",
    "PendingCall",
    "Provider",
    "RepairAction",
    "RepairPolicy",
    "RepairResult",
    "is_synthetic",
    "repair_messages",
]
