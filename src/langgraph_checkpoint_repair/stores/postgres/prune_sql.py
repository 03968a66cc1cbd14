"""A prune on PostgreSQL: the SQL its sync and async shells share, and the row mapping.

Each thread is pruned in one REPEATABLE READ transaction, so every statement reads
the snapshot its plan was made on: what the application writes meanwhile (a new
checkpoint, writes that land before their checkpoint) is neither seen nor deleted.
The transaction's first statement takes an advisory lock on the thread, never waited
for and held to its end: a second prune of the thread skips it (`claimed`). One that
took the lock just after the first committed, on a snapshot taken just before, fails
to delete a row already gone, as REPEATABLE READ does, and skips the thread
(`changed`): it never acts on rows that changed under it. Each
deleted row is copied into the archive (`langgraph_repair_pruned_*`) by the
statement that deletes it, unless the run keeps no archive.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ...decisions.plan import DETAIL_KEY
from ...retention.compact import COMPACT_KIND, Compaction, as_compacted
from ...retention.keep import StoredCheckpoint, ThreadPlan, planned
from ...retention.outcome import ThreadPruned
from ...retention.rules import PruneRules

T = TypeVar("T")

THREAD_LOCK_SQL = """
SELECT pg_try_advisory_xact_lock(
        hashtextextended('langgraph-repair prune ' || current_schema() || ' ' || %s, 0)),
    set_config('synchronous_commit', 'off', true)"""
"""The thread's lock (another for the same thread id in another schema's tables: an
advisory lock is the whole database's), and a commit that does not wait for the WAL
to reach the disk: a server that crashes just after loses the whole transaction, the
deletes with the archive rows that undo them, so the thread is as it was, never half
pruned. The run's record is committed with the server's own setting when the run
ends, and that flush makes every prune before it durable: a run reported finished
lost nothing. Waiting for each thread's flush was a third of a prune's time on a
store of short threads."""
SNAPSHOT_SQL = "BEGIN ISOLATION LEVEL REPEATABLE READ"

THREADS_SQL = """
SELECT DISTINCT thread_id FROM checkpoints
WHERE thread_id > %s AND (%s::text[] IS NULL OR thread_id = ANY(%s))
ORDER BY thread_id LIMIT %s"""
"""A page of thread ids after the last one read (keyset paging: each page is an index
range, however large the store)."""

SKELETON_SQL = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint -> 'channel_versions',
    ARRAY(SELECT jsonb_object_keys(checkpoint -> 'channel_values')
          WHERE jsonb_typeof(checkpoint -> 'channel_values') = 'object'),
    ARRAY(SELECT jsonb_object_keys(metadata -> 'counters_since_delta_snapshot')
          WHERE jsonb_typeof(metadata -> 'counters_since_delta_snapshot') = 'object'),
    metadata -> 'parents' ->> '',
    CASE WHEN checkpoint ->> 'v' ~ '^[0-9]{1,9}$' AND (checkpoint ->> 'v')::int < 4
        THEN EXISTS (SELECT 1 FROM checkpoint_writes w
            WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
            AND w.checkpoint_id = c.parent_checkpoint_id AND w.channel = '__pregel_tasks')
        ELSE false END,
    metadata -> 'langgraph_repair' ->> 'source_checkpoint_id',
    checkpoint ->> 'ts',
    CASE WHEN metadata ->> 'step' ~ '^-?[0-9]{1,9}$' THEN (metadata ->> 'step')::int END,
    metadata ->> 'run_id', metadata ->> 'source'
FROM checkpoints c WHERE thread_id = %s"""
"""Every checkpoint of a thread, without its values: what a plan is made of. The keys
stored inline are read here; which delta channels have a blob is asked only of a
thread that has delta channels (`BLOBS_HELD_SQL`)."""

ASKING_SQL = """
SELECT DISTINCT checkpoint_ns, checkpoint_id FROM checkpoint_writes
WHERE thread_id = %s AND channel = '__interrupt__'"""
"""The checkpoints of a thread holding a question (read for `--delete-idle`)."""
BLOBS_HELD_SQL = """
SELECT b.checkpoint_ns, b.channel, b.version FROM checkpoint_blobs b
WHERE b.thread_id = %s AND b.channel = ANY(%s) AND b.type <> 'empty'"""

PAIRS = "(checkpoint_ns, checkpoint_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
BLOB_KEYS = """(checkpoint_ns, channel, version) IN (
    SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))"""
TABLES = {
    "checkpoints": ("langgraph_repair_pruned_checkpoints", PAIRS),
    "checkpoint_writes": ("langgraph_repair_pruned_writes", PAIRS),
    "checkpoint_blobs": ("langgraph_repair_pruned_blobs", BLOB_KEYS),
}
"""LangGraph's tables, each with its archive and how a plan's rows are named in it."""

COLUMNS_SQL = """
SELECT table_name, column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = ANY(%s)"""


def deletion(
    run_id: str,
    thread_id: str,
    plan: ThreadPlan,
    columns: Mapping[str, Sequence[str]],
    archive: bool,
) -> Statement:
    """One statement deleting a thread's planned rows from each table, copying them into
    the archive on the way, and clearing the parent pointer of kept checkpoints whose
    parent goes (the pointer archived too): one round trip. Each table's number of rows
    and bytes come back, in `OUTCOME_TABLES` order."""
    steps: list[str] = []
    params: list[Any] = []
    counted = []
    for n, table in enumerate(OUTCOME_TABLES):
        archive_table, which = TABLES[table]
        listed = ", ".join(columns[table])
        steps.append(f"d{n} AS (DELETE FROM {table} WHERE thread_id = %s AND {which} "
                     f"RETURNING {listed})")  # fmt: skip
        params += [thread_id, *_named(table, plan)]
        if archive:
            steps.append(f"a{n} AS (INSERT INTO {archive_table} (run_id, {listed}) "
                         f"SELECT %s, {listed} FROM d{n})")  # fmt: skip
            params.append(run_id)
        counted.append(f"(SELECT count(*) FROM d{n}), (SELECT {_weight(columns[table])} FROM d{n})")
    if plan.writes:
        steps.append(f"dw AS (DELETE FROM checkpoint_writes WHERE thread_id = %s AND {WRITE_KEYS} "
                     f"RETURNING {', '.join(columns['checkpoint_writes'])})")  # fmt: skip
        params += [thread_id, *_write_keys(plan)]
        if archive:
            listed = ", ".join(columns["checkpoint_writes"])
            steps.append(f"aw AS (INSERT INTO langgraph_repair_pruned_writes (run_id, {listed}) "
                         f"SELECT %s, {listed} FROM dw)")  # fmt: skip
            params.append(run_id)
        counted[0] = (f"(SELECT count(*) FROM d0) + (SELECT count(*) FROM dw), "
                      f"(SELECT {_weight(columns['checkpoint_writes'])} FROM d0) + "
                      f"(SELECT {_weight(columns['checkpoint_writes'])} FROM dw)")  # fmt: skip
    if plan.orphaned:
        steps.append(ORPHANED + (ORPHAN_COPY if archive else "") + CLEARED)
        pairs = _columns([(ns, i) for ns, ids in plan.orphaned.items() for i in ids], 2)
        params += [thread_id, *pairs, *((run_id, thread_id) if archive else ()), thread_id]
    return f"WITH {', '.join(steps)} SELECT {', '.join(counted)}", params


WRITE_KEYS = """(checkpoint_ns, checkpoint_id, task_id, idx) IN (
    SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[]))"""
"""Pending writes named one by one (a rollback's, on the checkpoint its run started from)."""


def _write_keys(plan: ThreadPlan) -> list[list[Any]]:
    keys = [(ns, cid, task, idx) for ns, found in plan.writes.items() for cid, task, idx in found]
    return [[row[k] for row in keys] for k in range(4)]


ORPHANED = f"""old AS (
    SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints
    WHERE thread_id = %s AND {PAIRS} AND parent_checkpoint_id IS NOT NULL
)"""
CLEARED = """, cleared AS (
    UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM old
    WHERE c.thread_id = %s AND c.checkpoint_ns = old.checkpoint_ns
    AND c.checkpoint_id = old.checkpoint_id
)"""
"""Kept checkpoints whose parent is deleted: their pointer cleared, as LangGraph's prune
does (`ORPHAN_COPY` keeps it in the archive)."""


def measure_sql(table: str, columns: Sequence[str]) -> str:
    """What `delete_sql` would delete, counted and weighed, deleting nothing (a dry run)."""
    _, which = TABLES[table]
    return f"SELECT count(*), {_weight(columns)} FROM {table} WHERE thread_id = %s AND {which}"


def measure_writes_sql(columns: Sequence[str]) -> str:
    """The writes a plan names one by one, counted and weighed (a dry run)."""
    return (
        f"SELECT count(*), {_weight(columns)} FROM checkpoint_writes "
        f"WHERE thread_id = %s AND {WRITE_KEYS}"
    )


def _weight(columns: Sequence[str]) -> str:
    """The logical bytes of the rows: their columns' sizes as stored, added up."""
    sizes = " + ".join(f"COALESCE(pg_column_size({column}), 0)" for column in columns)
    return f"COALESCE(sum({sizes}), 0)"


ORPHAN_COPY = """, archived AS (
    INSERT INTO langgraph_repair_pruned_parents
    SELECT %s, %s, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM old
)"""


REPOINT_SQL = """
WITH old AS (
    SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints
    WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
    AND parent_checkpoint_id = %s
){copy}
UPDATE checkpoints c SET parent_checkpoint_id = %s FROM old
WHERE c.thread_id = %s AND c.checkpoint_ns = old.checkpoint_ns
AND c.checkpoint_id = old.checkpoint_id
RETURNING 1"""
REVERT_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
AND parent_checkpoint_id = %s"""
"""A compacted head pointed back at its old parent, where it still points at the snapshot."""


def repoint(run_id: str, thread_id: str, found: Compaction, archive: bool) -> Statement:
    """The compacted head pointed at its snapshot, where it still points at its old
    parent (which the archive keeps); one row back when it was."""
    head = (thread_id, found.checkpoint_ns, found.head_id, found.parent_id)
    copied = (run_id, thread_id) if archive else ()
    statement = REPOINT_SQL.format(copy=ORPHAN_COPY if archive else "")
    return statement, (*head, *copied, found.snapshot_id, thread_id)


def revert(thread_id: str, found: Compaction) -> Statement:
    head = (thread_id, found.checkpoint_ns, found.head_id, found.snapshot_id)
    return REVERT_SQL, (found.parent_id, *head)


SNAPSHOT_OF_RUN = f"""metadata -> '{DETAIL_KEY}' ->> 'kind' = '{COMPACT_KIND}'
    AND metadata -> '{DETAIL_KEY}' ->> 'run_id' = %s"""
UNPOINT_SQL = f"""
UPDATE checkpoints c SET parent_checkpoint_id = NULL
WHERE c.thread_id = %s AND (c.checkpoint_ns, c.parent_checkpoint_id) IN (
    SELECT s.checkpoint_ns, s.checkpoint_id FROM checkpoints s
    WHERE s.thread_id = %s AND {SNAPSHOT_OF_RUN})"""
"""Heads a compaction pointed at its snapshot (thread id, thread id, run id), cleared so
that their archived pointer is put back (`RESTORE_PARENTS_SQL`). The snapshots are
found once, not once per checkpoint of the thread (a long thread made that quadratic)."""
DROP_SNAPSHOTS_SQL = f"""
WITH gone AS (
    DELETE FROM checkpoints WHERE thread_id = %s AND {SNAPSHOT_OF_RUN}
    AND (%s::text IS NULL OR checkpoint_ns = %s AND checkpoint_id = %s)
    RETURNING checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
), blobs AS (
    DELETE FROM checkpoint_blobs b USING gone, jsonb_each_text(gone.versions) AS v
    WHERE b.thread_id = %s AND b.checkpoint_ns = gone.checkpoint_ns
    AND b.channel = v.key AND b.version = v.value
)
DELETE FROM checkpoint_writes w USING gone
WHERE w.thread_id = %s AND w.checkpoint_ns = gone.checkpoint_ns
AND w.checkpoint_id = gone.checkpoint_id"""
"""A run's compaction snapshots of one thread (or only the one named) deleted, with
their blobs (and writes)."""


def drop_snapshots(run_id: str, thread_id: str, found: Compaction | None = None) -> Statement:
    one = (
        (None, None, None)
        if found is None
        else (found.snapshot_id, found.checkpoint_ns, found.snapshot_id)
    )
    return DROP_SNAPSHOTS_SQL, (thread_id, run_id, *one, thread_id, thread_id)


def repoint_steps(run_id: str, thread_id: str, found: Compaction, archive: bool) -> Steps[bool]:
    changed = yield repoint(run_id, thread_id, found, archive)
    return bool(changed)


def revert_steps(run_id: str, thread_id: str, found: Compaction) -> Steps[None]:
    """The compacted head pointed back at its old parent; the run's snapshots deleted."""
    yield revert(thread_id, found)
    yield drop_snapshots(run_id, thread_id, found)


def measure_params(table: str, thread_id: str, plan: ThreadPlan) -> tuple[Any, ...]:
    return (thread_id, *_named(table, plan))


def _named(table: str, plan: ThreadPlan) -> list[list[str]]:
    if table == "checkpoint_blobs":
        blobs = [(ns, ch, v) for ns, pairs in plan.blobs.items() for ch, v in pairs]
        return _columns(blobs, 3)
    return _columns([(ns, i) for ns, ids in plan.deleted.items() for i in ids], 2)


def _columns(rows: Sequence[tuple[str, ...]], width: int) -> list[list[str]]:
    """Tuples of `width` to the parallel arrays `unnest` takes."""
    return [[row[k] for row in rows] for k in range(width)]


def stored_checkpoints(
    rows: Sequence[Sequence[Any]], blobs: Iterable[Sequence[Any]] = ()
) -> list[StoredCheckpoint]:
    """`SKELETON_SQL`'s rows, with the delta channels' blobs `BLOBS_HELD_SQL` found."""
    held = {(str(ns), str(ch), str(v)) for ns, ch, v in blobs}
    found = []
    for ns, cid, parent, versions, inline, counted, root, sends, repaired, ts, *more in rows:
        step, run_id, source = more
        as_text = {str(ch): str(v) for ch, v in (versions or {}).items()}
        holds = set(inline) | {ch for ch, v in as_text.items() if (ns, ch, v) in held}
        stored = StoredCheckpoint(
            ns,
            cid,
            parent,
            versions=as_text,
            holds=frozenset(holds),
            delta=frozenset(counted),
            root_id=root,
            needs_parent=bool(sends),
            repaired_from=repaired,
            written_at=ts,
            step=step,
            run_id=run_id,
            source=source,
        )
        found.append(stored)
    return found


def delta_channels(rows: Sequence[Sequence[Any]]) -> list[str]:
    """The delta channels a thread's skeleton rows count."""
    return sorted({str(channel) for row in rows for channel in row[5]})


def archive_lacks(lacking: Sequence[str]) -> str:
    return (
        f"the prune archive has no column for {', '.join(lacking)}: a prune would lose it; "
        "prune with --no-archive, or upgrade langgraph-checkpoint-repair"
    )


def missing_columns(found: Iterable[Sequence[str]]) -> tuple[dict[str, list[str]], list[str]]:
    """From `COLUMNS_SQL`'s rows: each LangGraph table's columns, and those of them its
    archive lacks (`table.column`), which a prune would lose."""
    by_table: dict[str, list[str]] = {}
    for table, column in found:
        by_table.setdefault(table, []).append(column)
    lacking = [
        f"{table}.{column}"
        for table, (archive, _) in TABLES.items()
        for column in by_table.get(table, [])
        if column not in by_table.get(archive, [])
    ]
    return {table: by_table.get(table, []) for table in TABLES}, lacking


COLUMN_TABLES = [*TABLES, *(archive for archive, _ in TABLES.values())]


Statement = tuple[str, Sequence[Any]]
Steps = Generator[Statement, list[tuple[Any, ...]], T]
"""The statements of one thread's work, each sent back its rows: the sync and async
pruners run the same steps (`prune.drive`, `aprune.adrive`)."""


def skeleton_steps(thread_id: str) -> Steps[list[StoredCheckpoint]]:
    """A thread's checkpoints as a plan reads them."""
    rows = yield SKELETON_SQL, (thread_id,)
    delta = delta_channels(rows)
    held = (yield BLOBS_HELD_SQL, (thread_id, delta)) if delta else []
    return stored_checkpoints(rows, held)


def prune_steps(
    run_id: str, thread_id: str, rules: PruneRules, columns: Mapping[str, Sequence[str]]
) -> Steps[ThreadPruned]:
    """One thread's prune, inside its snapshot: read, plan, delete (or, dry, measure)."""
    (held, _), *_ = yield THREAD_LOCK_SQL, (thread_id,)
    if not held:
        return ThreadPruned(thread_id, skipped="claimed")
    stored = yield from skeleton_steps(thread_id)
    if rules.compact and rules.dry_run:
        stored = as_compacted(stored, rules.compacted)
    plan = yield from planned(thread_id, stored, rules, ASKING_SQL)
    if isinstance(plan, ThreadPruned):
        return plan
    outcome = ThreadPruned(thread_id, whole=plan.whole)
    return (yield from carried_out(run_id, plan, columns, rules, outcome))


def carried_out(
    run_id: str,
    plan: ThreadPlan,
    columns: Mapping[str, Sequence[str]],
    rules: PruneRules,
    outcome: ThreadPruned,
) -> Steps[ThreadPruned]:
    """A thread's plan deleted (archived unless told not to), or, dry, measured: what went
    (or would go) added to `outcome`."""
    thread_id = outcome.thread_id
    if rules.dry_run:
        found: list[Any] = []
        for table in OUTCOME_TABLES:
            measure = measure_sql(table, columns[table]), measure_params(table, thread_id, plan)
            found += (yield measure)[0]
        if plan.writes:
            one_by_one = measure_writes_sql(columns["checkpoint_writes"])
            count, size = (yield one_by_one, (thread_id, *_write_keys(plan)))[0]
            found[0:2] = [found[0] + count, found[1] + size]
    else:
        found = list((yield deletion(run_id, thread_id, plan, columns, rules.archive))[0])
    for n, table in enumerate(OUTCOME_TABLES.values()):
        outcome.deleted.add(table, int(found[2 * n]), int(found[2 * n + 1]))
    return outcome


OUTCOME_TABLES = {
    "checkpoint_writes": "writes",
    "checkpoints": "checkpoints",
    "checkpoint_blobs": "blobs",
}
"""LangGraph's tables in the order a prune deletes from them, with their names in the
report: the writes before their checkpoints, the blobs once no kept row names them."""
