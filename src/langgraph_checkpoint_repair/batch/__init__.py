"""The batch job: repair a whole thread store, audit it, undo it."""

from .options import RunOptions
from .report import RunReport, ThreadReport, UndoReport, UnknownRun
from .runner import arepair_threads, aundo_run, migrate, repair_threads, undo_run

__all__ = [
    "RunOptions",
    "RunReport",
    "ThreadReport",
    "UndoReport",
    "UnknownRun",
    "arepair_threads",
    "aundo_run",
    "migrate",
    "repair_threads",
    "undo_run",
]
