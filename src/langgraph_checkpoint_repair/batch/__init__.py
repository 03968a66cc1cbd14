"""The batch job: repair a whole thread store, audit it, undo it."""

from .head_count import acount_heads, count_heads
from .inventory import TypeCount, TypeInventory, ainventory_types, inventory_types
from .migrate import migrate
from .options import RunOptions
from .preview import ThreadNotFound, ThreadPreview, apreview_thread, preview_thread
from .report import RunReport, StoreLost, ThreadReport, UndoReport, UnknownRun
from .runner import arepair_threads, repair_threads
from .undo import aundo_run, undo_run

__all__ = [
    "RunOptions",
    "RunReport",
    "StoreLost",
    "ThreadNotFound",
    "ThreadPreview",
    "ThreadReport",
    "TypeCount",
    "TypeInventory",
    "UndoReport",
    "UnknownRun",
    "acount_heads",
    "ainventory_types",
    "apreview_thread",
    "arepair_threads",
    "aundo_run",
    "count_heads",
    "inventory_types",
    "migrate",
    "preview_thread",
    "repair_threads",
    "undo_run",
]
