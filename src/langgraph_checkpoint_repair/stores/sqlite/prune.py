"""The SQLite prune, on the saver's own connection.

Each thread is pruned inside one `BEGIN IMMEDIATE` transaction: SQLite keeps every
other writer out while its rows are read and deleted, so the plan and the deletes see
the same rows (a dry run reads inside a plain transaction). SQLite keeps checkpoints
whole, values inside, so a row is decoded to learn which channels it stores; a thread
holding a row that does not decode is left as it is (`unreadable`). The archive lives
in the same file, in tables named `langgraph_repair_pruned_*`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ...retention.keep import StoredCheckpoint, ThreadPlan, plan_thread, written_since
from ...retention.outcome import Deleted, Skip, ThreadPruned
from ...retention.rules import PruneRules
from ..base import PAGE_SIZE
from . import base as sql
from . import prune_sql as ps


class SqlitePruner:
    """Prunes, restores and forgets on a SqliteSaver's file."""

    restore_needs = None
    forget_needs = None

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self.conn: sqlite3.Connection = saver.conn  # type: ignore[attr-defined]
        self.lock: threading.Lock = saver.lock  # type: ignore[attr-defined]
        self.writing = sql.writing_lock(saver)
        self.columns: dict[str, list[str]] = {}

    def ready(self, *, archive: bool, writes: bool) -> None:
        """The archive's tables created (a dry run creates nothing)."""
        with self.lock:
            self.columns = {table: self._columns(table) for table in ps.TABLES}
            if writes:
                for table in ps.TABLES:
                    self.conn.execute(ps.archive_ddl(table, self.columns[table]))
                self.conn.execute(ps.PARENTS_DDL)
                self.conn.execute(ps.RUNS_DDL)
                self.conn.commit()

    def _columns(self, table: str) -> list[str]:
        return [str(row[1]) for row in self.conn.execute(f"PRAGMA table_info({table})")]

    def thread_pages(self, threads: Sequence[str] | None) -> Iterator[list[str]]:
        after = ""
        while True:
            with self.lock:
                found = [str(r[0]) for r in self.conn.execute(ps.THREADS_SQL, (after, PAGE_SIZE))]
            if not found:
                return
            yield found if threads is None else [t for t in found if t in threads]
            after = found[-1]

    def begin_run(self, run_id: str, arguments: dict[str, Any]) -> None:
        self._commit(ps.BEGIN_RUN_SQL, (run_id, json.dumps(arguments)))

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self._commit(ps.FINISH_RUN_SQL, (json.dumps(summary), run_id))

    def _commit(self, query: str, params: Sequence[Any]) -> None:
        with self.writing, self.lock:
            self.conn.execute(query, params)
            self.conn.commit()

    def prune_thread(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        """One thread, inside one transaction that keeps other writers out."""
        with self.writing, self.lock:
            self.conn.execute("BEGIN" if rules.dry_run else sql.BEGIN_SQL)
            try:
                outcome = self._prune_in(run_id, thread_id, rules)
            except BaseException:
                self.conn.execute(sql.ROLLBACK_SQL)
                raise
            self.conn.execute(sql.COMMIT_SQL)
            return outcome

    def _prune_in(self, run_id: str, thread_id: str, rules: PruneRules) -> ThreadPruned:
        stored, refused = self._skeleton(thread_id)
        if refused is not None:
            return ThreadPruned(thread_id, skipped=refused)
        if written_since(stored, rules.recent_after):
            return ThreadPruned(thread_id, skipped="recent")
        plan = plan_thread(stored, rules.keep_last)
        outcome = ThreadPruned(thread_id)
        if plan.changes:
            named = _pairs(plan.deleted)
            for table in ("writes", "checkpoints"):
                outcome.deleted.add(table, *self._delete(table, run_id, thread_id, named, rules))
            if plan.orphaned and not rules.dry_run:
                self._clear_parents(run_id, thread_id, plan, rules.archive)
        return outcome

    def _skeleton(self, thread_id: str) -> tuple[list[StoredCheckpoint], Skip | None]:
        """The thread's rows as a plan reads them, or why they cannot be planned on."""
        rows = self.conn.execute(ps.SKELETON_SQL, (thread_id,)).fetchall()
        if any(row[3] == "json" for row in rows):
            return [], "langgraphjs"
        sends = {(str(r[0]), str(r[1])) for r in self.conn.execute(ps.SENDS_SQL, (thread_id,))}
        try:
            return [stored_checkpoint(row, sends, self.saver.serde) for row in rows], None
        except Exception:  # a row that does not decode: leave the thread as it is
            return [], "unreadable"

    def _delete(
        self, table: str, run_id: str, thread_id: str, named: str, rules: PruneRules
    ) -> tuple[int, int]:
        columns = self.columns[table]
        found = self.conn.execute(ps.measure_sql(table, columns), (thread_id, named))
        count, size = found.fetchone()
        if not rules.dry_run:
            if rules.archive:
                self.conn.execute(ps.archive_sql(table, columns), (run_id, thread_id, named))
            self.conn.execute(ps.delete_sql(table), (thread_id, named))
        return int(count), int(size)

    def _clear_parents(self, run_id: str, thread_id: str, plan: ThreadPlan, archive: bool) -> None:
        named = _pairs(plan.orphaned)
        if archive:
            self.conn.execute(ps.CLEARED_SQL, (run_id, thread_id, named))
        self.conn.execute(ps.CLEAR_SQL, (thread_id, named))

    def pruned_threads(self, run_id: str) -> list[str] | None:
        """The threads a prune run archived rows of; None when the run is no prune."""
        with self.lock:
            has_runs = self.conn.execute(ps.HAS_TABLE_SQL, (ps.RUNS,)).fetchone() is not None
            if not has_runs or not self.conn.execute(ps.IS_RUN_SQL, (run_id,)).fetchall():
                return None
            self.columns = {table: self._columns(table) for table in ps.TABLES}
            found = self.conn.execute(ps.ARCHIVED_THREADS_SQL, (run_id,) * len(ps.TABLES))
            return [str(row[0]) for row in found]

    def ready_to_restore(self, needs: object) -> None:
        """SQLite has no roles: a file this process may write holds every privilege."""

    def restore_thread(self, run_id: str, thread_id: str) -> Deleted:
        """Put a thread's archived rows back, parent pointers included, and empty its
        archive: one transaction."""
        restored = Deleted()
        with self.writing, self.lock:
            self.conn.execute(sql.BEGIN_SQL)
            try:
                for table in ps.TABLES:
                    query = ps.restore_sql(table, self.columns[table])
                    restored.add(table, self.conn.execute(query, (run_id, thread_id)).rowcount, 0)
                self.conn.execute(ps.RESTORE_PARENTS_SQL, (run_id, thread_id, run_id))
                for statement in ps.FORGET_THREAD_SQL:
                    self.conn.execute(statement, (run_id, thread_id))
            except BaseException:
                self.conn.execute(sql.ROLLBACK_SQL)
                raise
            self.conn.execute(sql.COMMIT_SQL)
        return restored

    def forget(self, run_id: str) -> int:
        """Drop a prune run's archive; the rows it held, counted."""
        with self.writing, self.lock:
            dropped = sum(self.conn.execute(q, (run_id,)).rowcount for q in ps.FORGET_RUN_SQL)
            self.conn.commit()
        return dropped


def _pairs(ids: dict[str, list[str]]) -> str:
    """(namespace, checkpoint id) pairs as the JSON array `prune_sql.NAMED` reads."""
    return json.dumps([[ns, i] for ns, found in ids.items() for i in found])


def stored_checkpoint(
    row: Sequence[Any], sends: set[tuple[str, str]], serde: Any
) -> StoredCheckpoint:
    """A checkpoint row, decoded, as a plan reads it."""
    ns, cid, parent, kind, blob, meta = row
    checkpoint = serde.loads_typed((kind, blob))
    metadata = json.loads(meta) if meta else {}
    metadata = metadata if isinstance(metadata, dict) else {}
    counters = metadata.get("counters_since_delta_snapshot")
    parents = metadata.get("parents")
    detail = metadata.get("langgraph_repair")
    version = checkpoint.get("v")
    return StoredCheckpoint(
        ns,
        cid,
        parent,
        versions={str(k): str(v) for k, v in (checkpoint.get("channel_versions") or {}).items()},
        holds=frozenset(checkpoint.get("channel_values") or {}),
        delta=frozenset(counters) if isinstance(counters, dict) else frozenset(),
        root_id=parents.get("") if isinstance(parents, dict) else None,
        needs_parent=isinstance(version, int) and version < 4 and (ns, parent) in sends,
        repaired_from=detail.get("source_checkpoint_id") if isinstance(detail, dict) else None,
        written_at=checkpoint.get("ts"),
    )
