"""How long the command's PostgreSQL sessions wait for a lock or run a statement: never
unbounded, and never longer than the operator allows."""

from __future__ import annotations

TIMEOUTS_SQL = """
SELECT set_config(ours.name,
    CASE WHEN current_setting(ours.name)::interval > interval '0'
        AND current_setting(ours.name)::interval <= ours.ms * interval '1 ms'
    THEN current_setting(ours.name) ELSE ours.ms::text END,
    {local})
FROM (VALUES ('lock_timeout', {lock_ms}), ('statement_timeout', {statement_ms}))
    AS ours (name, ms)"""
"""Cheap to run (no catalog view): on a role whose own limit is a few milliseconds it
must itself finish in time."""


def timeouts_sql(lock_ms: int, statement_ms: int, *, local: bool) -> str:
    """Set `lock_timeout` and `statement_timeout` to ours, unless the session's own is
    lower (set for the role, the database or in the URI's `options`): an operator's
    tighter limit wins over the command's; `local`: for this transaction only."""
    local_sql = "true" if local else "false"
    return TIMEOUTS_SQL.format(lock_ms=lock_ms, statement_ms=statement_ms, local=local_sql)


GENTLE_SQL = timeouts_sql(2_000, 30_000, local=True)
"""For a write's transaction: give up quickly rather than queue behind live traffic."""
SESSION_TIMEOUTS_SQL = timeouts_sql(2_000, 60_000, local=False)
"""For every session the command opens: no statement waits or runs unbounded."""
