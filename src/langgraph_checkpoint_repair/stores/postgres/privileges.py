"""What a PostgreSQL role needs for each command, checked before anything is written.

Only `migrate` runs DDL (and needs CREATE on the schema, once, as the tables'
owner). A look (scan, show, a dry run) reads LangGraph's three tables. A run
that writes (repair, undo) also appends checkpoints (`PostgresSaver.put`:
an upsert into `checkpoints`, an insert into `checkpoint_blobs`) and records
itself in the audit tables. What it does to pending writes that exist follows its
policy (`decisions.rewrites.InPlaceChanges`): UPDATE where text holding U+0000 is
rewritten (or put back), DELETE where a stale answer may be dropped (never with
`stale_resume=keep`), INSERT where undo puts a dropped answer back; each change
compares the bytes as it makes them, so no row is locked for UPDATE. The advisory
locks a run takes need no privilege. The check reads the catalog only
(`to_regclass`, `has_table_privilege`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Needs = Mapping[str, tuple[str, ...]]

AUDIT_TABLES = (
    "langgraph_repair_migrations",
    "langgraph_repair_runs",
    "langgraph_repair_threads",
    "langgraph_repair_rewrites",
    *(f"langgraph_repair_pruned_{kind}" for kind in ("checkpoints", "blobs", "writes", "parents")),
)
ARCHIVE_TABLES = AUDIT_TABLES[4:]
LOOK_NEEDS: Needs = {
    "checkpoints": ("SELECT",),
    "checkpoint_blobs": ("SELECT",),
    "checkpoint_writes": ("SELECT",),
}
APPEND_NEEDS: Needs = {
    "checkpoints": ("SELECT", "INSERT", "UPDATE"),
    "checkpoint_blobs": ("SELECT", "INSERT"),
    "checkpoint_writes": ("SELECT",),
    "langgraph_repair_migrations": ("SELECT",),
    "langgraph_repair_runs": ("SELECT", "INSERT", "UPDATE"),
    "langgraph_repair_threads": ("SELECT", "INSERT"),
    "langgraph_repair_rewrites": ("SELECT",),
}
"""What every writing run needs: append checkpoints (PostgreSQL's upsert asks for
UPDATE on `checkpoints` even where it only inserts) and keep its audit."""


def write_needs(*, update: bool, delete: bool, insert: bool) -> Needs:
    """What a writing run needs, given what it may do to existing pending writes."""
    wanted = {"INSERT": insert, "UPDATE": update, "DELETE": delete}
    on_writes = [privilege for privilege, needed in wanted.items() if needed]
    recorded = update or delete  # the original bytes, kept for undo
    return {
        **APPEND_NEEDS,
        "checkpoint_writes": ("SELECT", *on_writes),
        "langgraph_repair_rewrites": ("SELECT", "INSERT") if recorded else ("SELECT",),
    }


def prune_needs(*, archive: bool, recorded: bool = True, compact: bool = False) -> Needs:
    """What a prune needs: DELETE on LangGraph's tables (UPDATE on `checkpoints`, whose
    kept rows may lose a deleted parent), its run recorded (not the wrapper's, which
    keeps no record), unless it keeps no archive INSERT into the archive, and with
    `compact` INSERT where the saver writes a snapshot checkpoint."""
    written = ("INSERT",) if compact else ()
    needs: dict[str, tuple[str, ...]] = {
        "checkpoints": ("SELECT", "DELETE", "UPDATE", *written),
        "checkpoint_blobs": ("SELECT", "DELETE", *written),
        "checkpoint_writes": ("SELECT", "DELETE"),
    }
    if recorded:
        needs["langgraph_repair_runs"] = ("SELECT", "INSERT", "UPDATE")
    return {**needs, **{table: ("INSERT",) for table in ARCHIVE_TABLES if archive}}


RESTORE_NEEDS: Needs = {
    "checkpoints": ("SELECT", "INSERT", "UPDATE"),
    "checkpoint_blobs": ("SELECT", "INSERT"),
    "checkpoint_writes": ("SELECT", "INSERT"),
    "langgraph_repair_runs": ("SELECT",),
    **{table: ("SELECT", "DELETE") for table in ARCHIVE_TABLES},
}
"""What putting a prune's rows back needs (`undo`); `forget` needs DELETE on the archive."""
COMPACTED_RESTORE_NEEDS: Needs = {
    **RESTORE_NEEDS,
    "checkpoints": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "checkpoint_blobs": ("SELECT", "INSERT", "DELETE"),
    "checkpoint_writes": ("SELECT", "INSERT", "DELETE"),
}
"""The undo of a prune run with `--compact`, which also deletes the run's snapshots."""
FORGET_NEEDS: Needs = {
    "langgraph_repair_runs": ("SELECT",),
    **{table: ("SELECT", "DELETE") for table in ARCHIVE_TABLES},
}


MIGRATE = "run `langgraph-repair migrate` on this target once, as the owner of the tables"
AUDIT_MISSING = f"the audit tables are missing: {MIGRATE} (it needs CREATE on the schema)"

CHECK_SQL = """
SELECT quote_ident(current_user), t.name, t.privilege, to_regclass(t.name) IS NOT NULL,
    COALESCE(has_table_privilege(to_regclass(t.name), t.privilege), false)
FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS t (name, privilege, n)
ORDER BY t.n"""
AUDIT_STATE_SQL = """
SELECT to_regclass('langgraph_repair_migrations') IS NOT NULL,
    COALESCE(has_table_privilege(to_regclass('langgraph_repair_migrations'), 'SELECT'), false),
    COALESCE(has_schema_privilege(current_schema(), 'CREATE'), false)"""


def check_query(needs: Needs) -> tuple[str, tuple[list[str], list[str]]]:
    """One catalog query: per needed (table, privilege), whether the table exists and
    the current role holds the privilege."""
    pairs = [(table, privilege) for table, privileges in needs.items() for privilege in privileges]
    return CHECK_SQL, ([table for table, _ in pairs], [privilege for _, privilege in pairs])


def problem(rows: Sequence[Sequence[Any]]) -> str | None:
    """A one-line account of what stops the command, or None when nothing does: a
    missing audit table asks for `migrate`; a missing privilege is named, with its GRANT."""
    absent = [str(row[1]) for row in rows if not row[3]]
    if any(table in AUDIT_TABLES for table in absent):
        return AUDIT_MISSING
    if absent:
        return f"the database has no table {absent[0]}"
    missing = [(str(row[1]), str(row[2])) for row in rows if not row[4]]
    if not missing:
        return None
    role = str(rows[0][0])
    named = ", ".join(f"{privilege} on {table}" for table, privilege in missing)
    return f"role {role} lacks {named}; as the tables' owner: {grants(role, missing)}"


def grants(role: str, missing: Iterable[tuple[str, str]]) -> str:
    """The GRANT statements giving `role` the `missing` (table, privilege) pairs."""
    by_table: dict[str, list[str]] = {}
    for table, privilege in missing:
        by_table.setdefault(table, []).append(privilege)
    return " ".join(
        f"GRANT {', '.join(privileges)} ON {table} TO {role};"
        for table, privileges in by_table.items()
    )


def audit_step(
    state: Sequence[Any], applied: Iterable[int] | None, known: Iterable[int]
) -> str | None:
    """What the audit tables need before a run writes, from `AUDIT_STATE_SQL`'s row and
    the versions applied (None when unreadable): None (nothing, or a missing SELECT that
    the privilege check names), "migrate" (the role may create them), or a one-line
    request to run `migrate` as the owner."""
    exists, readable, may_create = (bool(value) for value in state)
    if exists and not readable:
        return None
    pending = sorted(set(known) - set(applied or ()))
    if exists and not pending:
        return None
    if may_create:
        return "migrate"
    if not exists:
        return AUDIT_MISSING
    return f"the audit tables are out of date (migration {pending[0]} not applied): {MIGRATE}"
