"""The sync PostgreSQL store: thin I/O over `base`."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Connection
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from ...decisions.plan import Assessment, NewCheckpoint
from ...decisions.races import Planned, WriteOutcome, Written, head_left, sibling_key, thread_key
from ...decisions.rewind import RowCopy, Rung, rung_from
from ...decisions.rewrites import (
    InPlaceChanges,
    RestoreOutcome,
    RewritePlan,
    WriteRewrite,
    audit_rows,
    before_rewriting,
    restoring,
    write_from_row,
)
from ...decoding.integrity import StoredValue
from ...redact import scrubbed
from ..base import PAGE_SIZE, Head, RepairEntry, Selection, StoreNotReady, put_new
from ..first_look import page
from ..first_look.helper import LookHelper
from ..generic import GenericStore
from ..stored_values import ThreadBlobs, key_params, thread_blobs, values_from_rows
from . import base as sql
from . import privileges, shards, values
from . import rewrite_sql as rw


class PostgresStore(GenericStore):
    """PostgresSaver: paged SQL over heads, a first look at blobs, audit tables."""

    look_helper = True
    """Whether a helper process takes most of each page's first look (`first_look.helper`)."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        super().__init__(saver)
        self.ranges: dict[tuple[int, int], shards.ThreadRange] = {}
        """Each shard's range, sampled once: the page reads and the count agree."""
        self.schema: str | None = None
        """The schema of the tables, read with the first claim (`base.SCHEMA_SQL`)."""

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Connection[Any]]:
        conn = self.saver.conn  # type: ignore[attr-defined]
        if isinstance(conn, ConnectionPool):
            with conn.connection() as pooled:
                yield pooled
        else:
            with self.saver.lock:  # type: ignore[attr-defined]
                yield conn

    def _rows(self, query: str, params: Any = None, binary: bool = False) -> list[tuple[Any, ...]]:
        """`binary` for the bulk reads: blobs come as they are stored, not hex-encoded."""
        with (
            self._connection() as conn,
            conn.cursor(row_factory=tuple_row, binary=binary) as cursor,
        ):
            return cursor.execute(query, params).fetchall()

    def _write(self, query: str, params: Any) -> None:
        """A short transaction that gives up quickly rather than queue behind live traffic."""
        with self._connection() as conn, conn.transaction():
            conn.execute(sql.GENTLE_SQL)
            conn.execute(query, params)

    def pages(self, selection: Selection) -> Iterator[list[Head]]:
        """Each page of heads with its verdicts. The next page's rows are read (one
        reader thread) while this page is decoded and its heads looked at, so the
        store's time hides behind ours; at most two pages are held at once. The end
        is only taken from a read made after the last page was looked at, so a store
        lost or locked meanwhile is still found there."""
        within = self._within(selection)
        yield from self._pages_within(selection, within)
        if within is not None:  # what the shard's range gained while it ran
            for more in shards.widened(within, self._sampled(selection)):
                yield from self._pages_within(selection, more)

    def _pages_within(
        self, selection: Selection, within: shards.ThreadRange | None
    ) -> Iterator[list[Head]]:
        with (
            ThreadPoolExecutor(1, thread_name_prefix="langgraph-repair-pages") as reader,
            LookHelper(self.look_helper and page.plain_look(self.saver.serde)) as helper,
        ):
            read = self._read_page(selection, shards.first_cursor(within), helper, within)
            while read is not None:
                after = read.after
                ahead = reader.submit(self._read_page, selection, after, helper, within)
                yield page.judge_page(read, self.saver.serde)
                del read  # let the page's rows go before the next is taken
                read = ahead.result() or self._read_page(selection, after, helper, within)

    def _read_page(
        self,
        selection: Selection,
        after: tuple[str, str] | None,
        helper: LookHelper,
        within: shards.ThreadRange | None,
    ) -> page.PageRows | None:
        """The rows of the heads after `after` and of their delta walks; None past the end.
        The helper starts on the page's blobs once they are read. A walk's failure is
        kept for `judge_page`, which reads those heads one by one."""
        found = self._rows(*sql.heads_query(selection, after, within), binary=True)
        rows, others = sql.split_rows(found)
        if not rows:
            return None
        read = page.PageRows(rows, budget=selection.token_budget, lost=sql.blobs_missing(found))
        if selection.graph_channels is not None:
            read.drifting = page.drift_suspects(found)
        for channel, keys in page.walks_needed(rows).items():
            try:
                walked = self._rows(
                    *sql.delta_walk_query(channel, keys, getattr(self.saver, "js_only", False)),
                    binary=True,
                )
            except psycopg.Error as error:
                read.walks[channel] = error
            else:
                read.walks[channel] = page.gather_walks(keys, walked, self.saver.serde)
        read.read_others(others, self.saver.serde, selection)
        read.start_judging(self.saver.serde, helper.start_judging)
        return read

    def _within(self, selection: Selection) -> shards.ThreadRange | None:
        """The shard's range of thread ids (`shards`), sampled once per store and shard."""
        if selection.shard is None or selection.shard[1] == 1:
            return None
        if selection.shard not in self.ranges:
            self.ranges[selection.shard] = self._sampled(selection)
            shards.announce(selection.shard, self.ranges[selection.shard])
        return self.ranges[selection.shard]

    def _sampled(self, selection: Selection) -> shards.ThreadRange:
        """The shard's range as the store's sample cuts it now."""
        assert selection.shard is not None
        return shards.range_of(self._rows(shards.SAMPLE_SQL), selection.shard)

    def count_heads(self, selection: Selection) -> int | None:
        rows = self._rows(*sql.count_query(selection, self._within(selection)))
        return int(rows[0][0])

    nul_matters = True
    rewrites_writes = True
    lists_waiting = True

    def type_pages(self, all_checkpoints: bool) -> Iterator[ThreadBlobs]:
        """Pages of threads and their msgpack blobs; the next page is read while the
        caller looks at this one."""
        with ThreadPoolExecutor(1, thread_name_prefix="langgraph-repair-types") as reader:
            rows = self._type_rows(None, all_checkpoints)
            while rows:
                after = (rows[-1][0], rows[-1][1])
                ahead = reader.submit(self._type_rows, after, all_checkpoints)
                yield thread_blobs(rows)
                rows = ahead.result()

    def _type_rows(self, after: tuple[str, str] | None, all_checkpoints: bool) -> list[Any]:
        query = values.types_query(after, all_checkpoints, PAGE_SIZE)
        return self._rows(*query, binary=True)

    def stored_values(self, key: tuple[str, str, str]) -> list[StoredValue] | None:
        rows = self._rows(values.VALUES_SQL, key_params(key), binary=True)
        return values_from_rows(rows)

    def head_id(self, thread_id: str, checkpoint_ns: str) -> str | None:
        rows = self._rows(sql.HEAD_ID_SQL, (thread_id, checkpoint_ns))
        return rows[0][0] if rows else None

    def row_types(self, thread_id: str, checkpoint_ns: str) -> frozenset[str] | None:
        params = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        return frozenset(row[0] for row in self._rows(sql.ROW_TYPES_SQL, params))

    def migrate(self) -> list[str]:
        """Apply the numbered migrations not applied yet; return their file names.
        A store already current is only read: no DDL, no CREATE privilege needed."""
        if self._audit_step() is None:
            return []
        applied: list[str] = []
        with self._connection() as conn, conn.transaction():
            conn.execute(sql.LOCK_SQL)
            conn.execute(sql.VERSION_TABLE_SQL)
            with conn.cursor(row_factory=tuple_row) as cursor:
                done = {row[0] for row in cursor.execute(sql.APPLIED_SQL).fetchall()}
            for version, name, statements in sql.migrations():
                if version not in done:
                    conn.execute(statements, prepare=False)  # several statements
                    conn.execute(sql.RECORD_MIGRATION_SQL, (version, name))
                    applied.append(name)
        return applied

    def _audit_step(self) -> str | None:
        """`privileges.audit_step` for this store, read from the catalog without DDL."""
        state = self._rows(privileges.AUDIT_STATE_SQL)[0]
        applied = {row[0] for row in self._rows(sql.APPLIED_SQL)} if state[1] else None
        return privileges.audit_step(state, applied, sql.known_versions())

    def ready_to_write(self, changes: InPlaceChanges) -> None:
        """The audit tables current (applied here only when the role may create them) and
        every privilege a writing run needs held; `StoreNotReady` before any write."""
        self._rows(sql.PROBE_SQL)  # a locked table fails here, before anything is recorded
        step = self._audit_step()
        if step == "migrate":
            self.migrate()
        elif step is not None:
            raise StoreNotReady(step)
        needs = privileges.write_needs(**asdict(changes))
        problem = privileges.problem(self._rows(*privileges.check_query(needs)))
        if problem is not None:
            raise StoreNotReady(problem)

    def begin_run(self, run_id: str, command: str, arguments: dict[str, Any]) -> None:
        self._write(sql.BEGIN_RUN_SQL, (run_id, command, json.dumps(scrubbed(arguments))))

    def write_repair(self, run_id: str, assessment: Assessment, new: NewCheckpoint) -> WriteOutcome:
        """Claim the thread, look at its head again, record and put the repair: one
        transaction, so a run stopped at any point leaves all of it or none."""
        audit_row = sql.repair_row(run_id, assessment, new)
        return self._write_claimed(assessment, new, audit_row, self._putting(new))

    def write_undo(self, run_id: str, planned: Planned, new: NewCheckpoint) -> WriteOutcome:
        """Claim the thread and put the undo checkpoint as a repair is put (the undo's
        record is the checkpoint's own metadata)."""
        return self._write_claimed(planned, new, None, self._putting(new))

    rewinds = True

    def chain_link(self, key: tuple[str, str, str]) -> Rung | None:
        return rung_from(self._rows(sql.RUNG_SQL, key_params(key)))

    def write_copy(self, run_id: str, planned: Planned, copy: RowCopy) -> WriteOutcome:
        """Claim the thread and copy the unreadable head's row on the rewind, as an undo
        checkpoint is put."""

        def put(conn: Connection[Any]) -> None:
            conn.execute(sql.COPY_SQL, copy.params())

        return self._write_claimed(planned, copy, None, put)

    def _putting(self, new: NewCheckpoint) -> Callable[[Connection[Any]], None]:
        """`new` put through a saver bound to the claiming transaction's connection."""

        def put(conn: Connection[Any]) -> None:
            saver = PostgresSaver(conn, serde=self.saver.serde)
            put_new(saver, new)

        return put

    def _write_claimed(
        self,
        planned: Planned,
        new: Written,
        audit_row: tuple[Any, ...] | None,
        put: Callable[[Connection[Any]], None],
    ) -> WriteOutcome:
        with self._connection() as conn, conn.transaction():
            conn.execute(sql.GENTLE_SQL)
            moved = self._claim(conn, planned, new.checkpoint_id)
            if moved is not None:
                return moved
            if audit_row is not None:
                conn.execute(sql.RECORD_REPAIR_SQL, audit_row)
            put(conn)  # inside the transaction
        siblings = self._rows(sql.SIBLINGS_SQL, sibling_key(planned, new))
        return "superseded" if siblings[0][0] else "repaired"

    def _claim(
        self, conn: Connection[Any], planned: Planned, repair_id: str | None
    ) -> WriteOutcome | None:
        """None once this transaction holds the thread's lock and the head is still the
        repair's source; otherwise why the thread is left alone."""
        if not self._lock(conn, planned):
            return "claimed"
        with conn.cursor(row_factory=tuple_row) as cursor:
            head = cursor.execute(sql.HEAD_ID_SQL, thread_key(planned)).fetchone()
        return head_left(None if head is None else head[0], planned, repair_id)

    def _lock(self, conn: Connection[Any], planned: Planned) -> bool:
        """Whether this transaction now holds the thread's repair lock (no wait)."""
        with conn.cursor(row_factory=tuple_row) as cursor:
            if self.schema is None:
                self.schema = str(cursor.execute(sql.SCHEMA_SQL).fetchone()[0])  # type: ignore[index]
            key = sql.claim_key(*thread_key(planned), self.schema)
            taken = cursor.execute(sql.CLAIM_SQL, key).fetchone()
        return bool(taken and taken[0])

    def rewrite_writes(self, run_id: str, plan: RewritePlan) -> WriteOutcome:
        """Claim the thread, look at its head and each write's bytes again, record the
        original bytes and rewrite the writes in place: one transaction."""
        try:
            with self._connection() as conn, conn.transaction():
                conn.execute(sql.GENTLE_SQL)
                moved = self._claim(conn, plan, None)
                if moved is None:
                    moved = before_rewriting(self._current_blobs(conn, plan.writes), plan)
                if moved is not None:
                    return moved
                conn.execute(sql.RECORD_REPAIR_SQL, rw.audit_row(run_id, plan))
                with conn.cursor() as cursor:
                    cursor.executemany(rw.RECORD_REWRITE_SQL, audit_rows(run_id, plan))
                    for statement, params in rw.statements(plan.writes):
                        cursor.executemany(statement, params)
                        rw.check_changed(cursor.rowcount, params)
        except rw.WritesChanged:
            return "moved_on"  # an application wrote one since the look
        return "repaired"

    def _current_blobs(
        self, conn: Connection[Any], writes: Sequence[WriteRewrite]
    ) -> list[bytes | None]:
        """Each write's bytes now (each change compares them again as it is made)."""
        blobs: list[bytes | None] = []
        with conn.cursor(row_factory=tuple_row, binary=True) as cursor:
            for write in writes:
                row = cursor.execute(rw.CURRENT_BLOB_SQL, write.key).fetchone()
                blobs.append(None if row is None else bytes(row[0]))
        return blobs

    def rewrites_of(self, run_id: str) -> list[WriteRewrite]:
        if not self._rows(rw.HAS_REWRITES_SQL)[0][0]:
            return []
        rows = self._rows(rw.REWRITES_OF_SQL, (run_id,), binary=True)
        return [write_from_row(row) for row in rows]

    def restore_writes(self, writes: Sequence[WriteRewrite]) -> list[RestoreOutcome]:
        """Put back the original bytes of one checkpoint's rewritten writes, each only
        where its bytes are still the rewrite's; the outcome of each, in order."""
        try:
            with self._connection() as conn, conn.transaction():
                conn.execute(sql.GENTLE_SQL)
                if not self._lock(conn, writes[0]):
                    return ["claimed"] * len(writes)
                current = self._current_blobs(conn, writes)
                outcomes, back = restoring(writes, current)
                with conn.cursor() as cursor:
                    for statement, params in rw.statements(back):
                        cursor.executemany(statement, params)
                        rw.check_changed(cursor.rowcount, params)
        except rw.WritesChanged:
            return ["moved_on"] * len(writes)  # an application wrote one since the look
        return outcomes

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self._write(sql.FINISH_RUN_SQL, (json.dumps(scrubbed(summary)), run_id))

    def repairs_of(self, run_id: str) -> Iterator[RepairEntry]:
        audited = self._rows(sql.REPAIRS_OF_SQL, (run_id,)) if self._has_audit() else []
        if not audited:  # a run recorded only in checkpoint metadata
            yield from super().repairs_of(run_id)
        for row in audited:
            if not sql.rewrote_in_place(row):  # `rewrites_of` restores those
                yield sql.entry_from_row(row)

    def _has_audit(self) -> bool:
        return bool(self._rows(sql.RUN_EXISTS_SQL)[0][0])
