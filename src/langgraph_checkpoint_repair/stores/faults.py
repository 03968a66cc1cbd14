"""Which failures mean the store itself is gone, not one thread, and what caused a pool's
timeout.

A terminated backend, a server shutting down, a connection that breaks, or a pool
that cannot get a new one (the database refuses logins, was dropped, renamed):
then every later thread would fail too, each after a wait, so a run stops at the
first such failure instead of reporting it per thread. Lock waits, statement
timeouts and missing privileges stay per-thread errors.

A psycopg pool that fails to open or set up a connection logs the error and tries
again in the background; the caller waiting for a connection only ever sees
`PoolTimeout` ("couldn't get a connection after 5.00 sec"), whatever the cause. So
the command keeps the last error the pool logged (`watch_connection_failures`) and
names that one (`named_cause`): the same mistake reads the same, however busy the
machine was when it was made.
"""

from __future__ import annotations

import logging
import sys

LOST_STATES = frozenset({"57P01", "57P02", "57P03", "3D000", "28000", "53300"})
"""admin/crash shutdown, cannot connect now, no such database, login refused, too many
connections; any state of class 08 (connection exception) counts too."""

POOL_LOGGER = "psycopg.pool"
"""The logger psycopg's sync and async pools both log their failed connections to."""


def store_lost(error: BaseException) -> bool:
    """True when `error` says the database connection is gone and will not come back soon."""
    psycopg = sys.modules.get("psycopg")  # never imported here: no psycopg, no psycopg error
    if psycopg is None or not isinstance(error, psycopg.OperationalError):
        return False
    if _is_pool_timeout(error):
        return True
    state = getattr(error, "sqlstate", None)
    return state is None or state.startswith("08") or state in LOST_STATES


class ConnectionFailures(logging.Filter):
    """Keeps the last exception a pool logged (a failed connection attempt, or a set-up
    statement that failed on a new connection) and lets the pool's own lines through
    only when `shown`: they are retried quietly, and the command names the cause once."""

    def __init__(self, shown: bool) -> None:
        super().__init__(POOL_LOGGER)
        self.shown = shown
        self.last: BaseException | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if args and isinstance(args[-1], BaseException):
            self.last = args[-1]
        return self.shown or record.levelno >= logging.ERROR


_watching: ConnectionFailures | None = None


def watch_connection_failures(shown: bool = False) -> ConnectionFailures:
    """Start keeping the last failure of any psycopg pool in this process (the command's
    own and a factory's alike); `shown`: the pool's log lines still reach the handlers."""
    global _watching
    logger = logging.getLogger(POOL_LOGGER)
    if _watching is not None:
        logger.removeFilter(_watching)
    _watching = ConnectionFailures(shown)
    logger.addFilter(_watching)
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)  # the failures are logged as warnings
    return _watching


def named_cause(error: BaseException) -> BaseException:
    """The error to name for `error`: a pool's timeout gives way to the last failure its
    connections met, when one was seen; any other error is its own cause."""
    if _watching is None or _watching.last is None or not _is_pool_timeout(error):
        return error
    return _watching.last


def _is_pool_timeout(error: BaseException) -> bool:
    pool = sys.modules.get("psycopg_pool")
    return pool is not None and isinstance(error, pool.PoolTimeout)
