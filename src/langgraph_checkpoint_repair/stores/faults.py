"""Which failures mean the store itself is gone, not one thread.

A terminated backend, a server shutting down, a connection that breaks, or a pool
that cannot get a new one (the database refuses logins, was dropped, renamed):
then every later thread would fail too, each after a wait, so a run stops at the
first such failure instead of reporting it per thread. Lock waits, statement
timeouts and missing privileges stay per-thread errors.
"""

from __future__ import annotations

import sys

LOST_STATES = frozenset({"57P01", "57P02", "57P03", "3D000", "28000", "53300"})
"""admin/crash shutdown, cannot connect now, no such database, login refused, too many
connections; any state of class 08 (connection exception) counts too."""


def store_lost(error: BaseException) -> bool:
    """True when `error` says the database connection is gone and will not come back soon."""
    psycopg = sys.modules.get("psycopg")  # never imported here: no psycopg, no psycopg error
    if psycopg is None or not isinstance(error, psycopg.OperationalError):
        return False
    pool = sys.modules.get("psycopg_pool")
    if pool is not None and isinstance(error, pool.PoolTimeout):
        return True
    state = getattr(error, "sqlstate", None)
    return state is None or state.startswith("08") or state in LOST_STATES
