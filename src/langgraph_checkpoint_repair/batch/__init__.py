"""The batch job: repair a whole thread store, audit it, undo it; prune it, roll runs back."""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:  # the names as checkers see them; at run time, `__getattr__` below
    from .inventory import TypeCount as TypeCount
    from .inventory import TypeInventory as TypeInventory
    from .inventory import ainventory_types as ainventory_types
    from .inventory import inventory_types as inventory_types
    from .options import RunOptions as RunOptions
    from .preview import ThreadNotFound as ThreadNotFound
    from .preview import ThreadPreview as ThreadPreview
    from .preview import apreview_thread as apreview_thread
    from .preview import preview_thread as preview_thread
    from .pruning import PruneReport as PruneReport
    from .pruning import PruneUndoReport as PruneUndoReport
    from .pruning import aforget_run as aforget_run
    from .pruning import aprune_threads as aprune_threads
    from .pruning import aundo_prune as aundo_prune
    from .pruning import forget_run as forget_run
    from .pruning import prune_threads as prune_threads
    from .pruning import undo_prune as undo_prune
    from .report import RunReport as RunReport
    from .report import StoreLost as StoreLost
    from .report import ThreadReport as ThreadReport
    from .report import UndoReport as UndoReport
    from .report import UnknownRun as UnknownRun
    from .rollback import arollback_runs as arollback_runs
    from .rollback import rollback_runs as rollback_runs
    from .runner import acount_heads as acount_heads
    from .runner import arepair_threads as arepair_threads
    from .runner import count_heads as count_heads
    from .runner import migrate as migrate
    from .runner import repair_threads as repair_threads
    from .undo import aundo_run as aundo_run
    from .undo import undo_run as undo_run

# loaded on first use: a scan needs the runner, not undo's or `show`'s modules
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".inventory": ("TypeCount", "TypeInventory", "ainventory_types", "inventory_types"),
        ".options": ("RunOptions",),
        ".preview": ("ThreadNotFound", "ThreadPreview", "apreview_thread", "preview_thread"),
        ".pruning": (
            "PruneReport",
            "PruneUndoReport",
            "aforget_run",
            "aprune_threads",
            "aundo_prune",
            "forget_run",
            "prune_threads",
            "undo_prune",
        ),
        ".report": ("RunReport", "StoreLost", "ThreadReport", "UndoReport", "UnknownRun"),
        ".rollback": ("arollback_runs", "rollback_runs"),
        ".runner": ("acount_heads", "arepair_threads", "count_heads", "migrate", "repair_threads"),
        ".undo": ("aundo_run", "undo_run"),
    },
)
