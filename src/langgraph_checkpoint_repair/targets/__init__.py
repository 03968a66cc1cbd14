"""TARGET string -> an open saver, sync and async; what the command line and the Agent
Server drop-in share to reach a store. One module per job:

    parse         which kind of store a TARGET names, without opening it
    opening       open_saver / aopen_saver: the saver for a TARGET, opened by its
                  store's driver (`stores.postgres.opening`, `stores.sqlite.files`)
    factories     `module:attr` targets: savers and factories as applications write them
    saver_api     which half of the saver API (sync, async) a saver implements
    errors        TargetError and its kinds: one line for a person
"""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:  # the names as checkers see them; at run time, `__getattr__` below
    from .errors import AsyncFactory as AsyncFactory
    from .errors import TargetError as TargetError
    from .opening import aopen_saver as aopen_saver
    from .opening import open_saver as open_saver
    from .parse import TARGET_ENV as TARGET_ENV
    from .parse import Target as Target
    from .parse import parse_target as parse_target
    from .saver_api import ASYNC_API as ASYNC_API
    from .saver_api import SYNC_API as SYNC_API
    from .saver_api import implements as implements
    from .saver_api import refuses_sync as refuses_sync

# loaded on first use: `--help` needs TARGET_ENV, not the savers `opening` imports
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".errors": ("AsyncFactory", "TargetError"),
        ".opening": ("aopen_saver", "open_saver"),
        ".parse": ("TARGET_ENV", "Target", "parse_target"),
        ".saver_api": ("ASYNC_API", "SYNC_API", "implements", "refuses_sync"),
    },
)
