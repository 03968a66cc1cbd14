"""The load-time repair wrapper around any LangGraph checkpoint saver."""

from .guard import UnreadableCheckpoint
from .saver import PatchingCheckpointer
from .view import OnRepair, RepairEvent

__all__ = ["OnRepair", "PatchingCheckpointer", "RepairEvent", "UnreadableCheckpoint"]
