"""TARGET string -> an open saver, sync and async; what the command line and the Agent
Server drop-in share to reach a store. One module per job:

    parse         which kind of store a TARGET names, without opening it
    opening       open_saver / aopen_saver: the saver for a TARGET (SQLite files here)
    postgres      PostgreSQL targets: the server checked, then a pool of set-up sessions
    factories     `module:attr` targets: savers and factories as applications write them
    saver_api     which half of the saver API (sync, async) a saver implements
    errors        TargetError and its kinds: one line for a person
    privileges    what a PostgreSQL role needs for each command (the stores check writes)
    sqlite_files  SQLite files opened by URI (read-only for looks), their tables
    redact        passwords masked in whatever is printed, logged or recorded
"""

from .errors import AsyncFactory, TargetError
from .opening import aopen_saver, open_saver
from .parse import TARGET_ENV, Target, parse_target
from .saver_api import ASYNC_API, SYNC_API, implements, refuses_sync

__all__ = [
    "ASYNC_API",
    "SYNC_API",
    "TARGET_ENV",
    "AsyncFactory",
    "Target",
    "TargetError",
    "aopen_saver",
    "implements",
    "open_saver",
    "parse_target",
    "refuses_sync",
]
