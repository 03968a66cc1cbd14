"""Shards, throughput and memory of `langgraph-repair scan` on a large PostgreSQL store.

Seeds a store of N threads (default 200,000; `--threads 1000000` for a million)
on the server: LangGraph's PostgresSaver writes two template threads (a first
checkpoint, then a head of 12 messages on it; one clean, one whose call has no
result), and one INSERT ... SELECT over generate_series per table copies them
under random UUID thread ids, 1% broken. A store of N/10 threads is seeded the
same way. Both live in a database of their own, created and dropped here, so
that pg_stat_database counts this benchmark's reads only. Then, each figure a
ratio of two measures taken in the same run:

- database reads of `--shard K/N` for N = 2 and N = 8, all shards run one after
  another as commands, against one unsharded `scan` command: tuples
  (tup_returned + tup_fetched) and buffers (blks_hit + blks_read), from
  pg_stat_database deltas read after every backend of the run has exited and
  pg_stat_clear_snapshot() (goal: at most 1.25x);
- wall time of the 2 shards run side by side (two commands at once) against
  the one `scan` command;
- scan throughput per thread on the N store against the N/10 store (in this
  process, as `bench_batch.py` times a scan; 1.00x is as fast per thread);
- peak Python memory of the scan, N store against N/10 (1.00x is flat): as the
  command runs by default (its report keeps a table's worth of broken threads),
  and `scan --list` and `scan --json`, which print every broken thread as they go
  (the command itself, run in this process, its output thrown away);
- `repair` (1% of the threads) and `undo` of that run: time per repaired
  thread, N store against N/10 (1.00x is as fast per thread);
- the plan (EXPLAIN ANALYZE) of the first head page, unsharded and of shard
  3/8: the most rows any Sort node takes in, against the table's rows;
- the budget column: `scan --policy max_input_tokens=200000` against `scan`, both
  commands on the same N store, wall time (the median of `BUDGET_ROUNDS` rounds of
  the two back to back, their order alternating) and database reads; and the same
  wall-time ratio on a SQLite file of N threads seeded the same way (goal: at most
  1.25x on both).

    python benchmarks/bench_scale.py [--threads 200000] [--postgres postgresql://...]
        [--only memory|streamed|budget] [--budget-rounds 3]

`--only memory` seeds the two stores and measures the peak memory figures alone;
`--only streamed` only those of `scan --list` and `scan --json`; `--only budget`
the budget column alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from bench_batch import peak_scan_memory, repair_saver, scan, scan_saver, timed
from bench_engine import make_history
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg.rows import dict_row

from langgraph_checkpoint_repair.batch import repair_threads, undo_run
from langgraph_checkpoint_repair.cli import main as command
from langgraph_checkpoint_repair.cli.arguments import TABLE_ROWS
from langgraph_checkpoint_repair.stores.base import Selection
from langgraph_checkpoint_repair.stores.postgres import base as scan_sql
from langgraph_checkpoint_repair.stores.postgres import shards

DATABASE = os.environ.get("BENCH_SCALE_DATABASE", "langgraph_repair_bench_scale")
"""The benchmark's own database (another name lets two runs share a server)."""
MESSAGES = 12
BROKEN_EVERY = 100  # 1%
COLUMNS = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
}
COPY_SQL = """
INSERT INTO {table} (thread_id, {columns})
SELECT md5('thread-' || n)::uuid::text, {columns}
FROM generate_series(0, %(threads)s - 1) AS n
JOIN {table} ON thread_id = CASE WHEN n %% {every} = 0 THEN 'template-broken'
    ELSE 'template-clean' END
ORDER BY n"""
COMMAND = [sys.executable, "-m", "langgraph_checkpoint_repair.cli", "scan"]
BUDGET = ["--policy", "max_input_tokens=200000"]
"""The budget column's policy: a model's window far above these threads' histories."""
BUDGET_ROUNDS = 3
SQLITE_COPY_SQL = """
WITH RECURSIVE n (x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < ? - 1)
INSERT INTO checkpoints (thread_id, {columns})
SELECT printf('thread-%07d', x), {columns}
FROM n JOIN checkpoints ON thread_id = CASE WHEN x % {every} = 0 THEN 'template-broken'
    ELSE 'template-clean' END"""
SQLITE_COLUMNS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"


def in_database(uri: str, database: str, schema: str | None = None) -> str:
    """`uri` pointed at another database (and, with `schema`, only that schema)."""
    parts = urlsplit(uri)
    query = parts.query
    if schema is not None:
        query = f"{query}&" if query else ""
        query += f"options={quote(f'-c search_path={schema}')}"
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", query, ""))


@contextlib.contextmanager
def bench_database(server: str) -> Iterator[str]:
    """A database of this benchmark's own, dropped afterwards."""
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    try:
        yield in_database(server, DATABASE)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def write_template(saver: BaseCheckpointSaver[Any], thread_id: str, broken: bool) -> None:
    """A first checkpoint (the input) and a head of MESSAGES messages on it, an hour old,
    written with the saver's own put."""
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    old = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    history = make_history(MESSAGES, 1 if broken else None)
    version = None
    for step, messages in enumerate(([HumanMessage("question 0", id="h0")], history)):
        checkpoint = empty_checkpoint()
        checkpoint["ts"] = old
        version = saver.get_next_version(version, None)
        checkpoint["channel_values"] = {"messages": messages}
        checkpoint["channel_versions"] = {"messages": version}
        metadata: Any = {"source": "input" if step == 0 else "loop", "step": step - 1}
        config = saver.put(config, checkpoint, metadata, {"messages": version})


def seed(
    database_uri: str,
    schema: str,
    threads: int,
    more: Callable[[PostgresSaver], None] | None = None,
    copies: dict[str, str] | None = None,
) -> tuple[str, float]:
    """A store of `threads` threads in `schema`; its URI and the seconds seeding took.
    `more` writes more template threads, and `copies` (table -> its INSERT ... SELECT)
    copies them instead of `COPY_SQL`."""
    start = time.perf_counter()
    with psycopg.connect(database_uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    uri = in_database(database_uri, DATABASE, schema)
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        write_template(saver, "template-clean", broken=False)
        write_template(saver, "template-broken", broken=True)
        if more is not None:
            more(saver)
        copies = copies or {
            table: COPY_SQL.format(table=table, columns=columns, every=BROKEN_EVERY)
            for table, columns in COLUMNS.items()
        }
        for table, copy in copies.items():
            conn.execute(copy, {"threads": threads})
            conn.execute(f"DELETE FROM {table} WHERE thread_id LIKE 'template-%'")
        conn.execute("VACUUM ANALYZE")  # as autovacuum leaves a store of this age
    return uri, time.perf_counter() - start


@dataclass(frozen=True)
class Reads:
    tuples: int
    buffers: int

    def __add__(self, other: Reads) -> Reads:
        return Reads(self.tuples + other.tuples, self.buffers + other.buffers)

    def __sub__(self, other: Reads) -> Reads:
        return Reads(self.tuples - other.tuples, self.buffers - other.buffers)


READS_SQL = """
SELECT tup_returned + tup_fetched, blks_hit + blks_read FROM pg_stat_database
WHERE datname = %s"""
OTHERS_SQL = """
SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'"""


def database_reads(server: str) -> Reads:
    """The bench database's counters, once every client backend of it has exited (a
    backend publishes what it read at the latest when it exits)."""
    with psycopg.connect(server, autocommit=True) as conn:
        while conn.execute(OTHERS_SQL, (DATABASE,)).fetchone() != (0,):
            time.sleep(0.05)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(READS_SQL, (DATABASE,)).fetchone()
    assert row is not None
    return Reads(int(row[0]), int(row[1]))


def start_scan(
    uri: str, shard: tuple[int, int] | None, budget: bool = False
) -> subprocess.Popen[str]:
    """`langgraph-repair scan` as an operator runs it, in a process of its own."""
    argv = [*COMMAND, uri, "--min-idle", "0", "--json", *(BUDGET if budget else [])]
    if shard is not None:
        argv += ["--shard", f"{shard[0]}/{shard[1]}"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"scan failed ({process.returncode}): {stderr.strip()}")
    summary: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return summary


def command_reads(
    server: str, uri: str, shard: tuple[int, int] | None, budget: bool = False
) -> tuple[Reads, dict[str, Any]]:
    """What one scan command made the database read, and its summary."""
    before = database_reads(server)
    summary = finished(start_scan(uri, shard, budget))
    return database_reads(server) - before, summary


def shards_reads(server: str, uri: str, n: int, whole: dict[str, Any]) -> Reads:
    """The N shards run one after another: their reads added up. Their summaries
    add up to the unsharded scan's (the shards cover the store exactly once)."""
    total, scanned, broken = Reads(0, 0), 0, 0
    for k in range(n):
        reads, summary = command_reads(server, uri, (k, n))
        total += reads
        scanned += summary["threads_scanned"]
        broken += summary["threads_needing_repair"]
    assert (scanned, broken) == (whole["threads_scanned"], whole["threads_needing_repair"])
    return total


def side_by_side(uri: str, shard_count: int) -> float:
    """Wall time of all shards started at once, until the last one ends."""
    start = time.perf_counter()
    processes = [start_scan(uri, (k, shard_count)) for k in range(shard_count)]
    for process in processes:
        finished(process)
    return time.perf_counter() - start


def one_command(uri: str, budget: bool = False) -> float:
    start = time.perf_counter()
    finished(start_scan(uri, None, budget))
    return time.perf_counter() - start


def budget_walls(uri: str, rounds: int) -> tuple[float, float]:
    """The median wall time of the scan command with the budget and without, over
    `rounds` rounds of the two back to back (which goes first alternates)."""
    walls: dict[bool, list[float]] = {True: [], False: []}
    for turn in range(rounds):
        for budget in (turn % 2 == 0, turn % 2 == 1):
            walls[budget].append(one_command(uri, budget))
    return statistics.median(walls[True]), statistics.median(walls[False])


def seed_sqlite(path: Path, threads: int) -> float:
    """A SQLite file of `threads` threads as `seed` makes them (two template threads
    written by SqliteSaver, copied in SQL under new ids, 1% broken); the seconds it took."""
    start = time.perf_counter()
    with SqliteSaver.from_conn_string(str(path)) as saver:
        write_template(saver, "template-clean", broken=False)
        write_template(saver, "template-broken", broken=True)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        copy = SQLITE_COPY_SQL.format(columns=SQLITE_COLUMNS, every=BROKEN_EVERY)
        conn.execute(copy, (threads,))
        conn.execute("DELETE FROM checkpoints WHERE thread_id LIKE 'template-%'")
    return time.perf_counter() - start


def budget_main(server: str, threads: int, rounds: int) -> None:
    """Only the budget column: a PostgreSQL store and a SQLite file of `threads`."""
    with bench_database(server) as database:
        big, big_seed = seed(database, "big", threads)
        print(f"seeded {threads:,} PostgreSQL threads in {big_seed:.0f} s")
        figures = budget_figures(server, big, threads, rounds)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite"
        print(f"seeded {threads:,} SQLite threads in {seed_sqlite(path, threads):.0f} s")
        sqlite_walls = budget_walls(f"sqlite:///{path}", rounds)
    print(budget_definitions(rounds))
    print_budget(*figures, sqlite_walls)


def budget_figures(
    server: str, uri: str, threads: int, rounds: int
) -> tuple[tuple[Reads, Reads], tuple[float, float]]:
    """The budget column on PostgreSQL: each scan's reads, then the wall times. Both
    scans report the same (nothing is near the budget)."""
    with_budget, summary = command_reads(server, uri, None, budget=True)
    without, plain = command_reads(server, uri, None)
    assert summary["threads_scanned"] == plain["threads_scanned"] == threads
    assert summary["threads_needing_repair"] == plain["threads_needing_repair"]
    return (with_budget, without), budget_walls(uri, rounds)


def print_budget(
    reads: tuple[Reads, Reads], walls: tuple[float, float], sqlite_walls: tuple[float, float]
) -> None:
    (budget_reads, reads_without), (budget_wall, wall) = reads, walls
    print(f"budget / none, PostgreSQL scan wall time: {budget_wall / wall:.2f}x "
          f"({budget_wall:.1f} s / {wall:.1f} s)")  # fmt: skip
    print(f"budget / none, PostgreSQL scan reads: "
          f"tuples {budget_reads.tuples / reads_without.tuples:.3f}x, "
          f"buffers {budget_reads.buffers / reads_without.buffers:.3f}x")  # fmt: skip
    budget_wall, wall = sqlite_walls
    print(f"budget / none, SQLite scan wall time: {budget_wall / wall:.2f}x "
          f"({budget_wall:.1f} s / {wall:.1f} s)")  # fmt: skip


def first_page_plan(uri: str, shard: tuple[int, int] | None) -> tuple[list[str], int, int]:
    """The plan of the first head page (unsharded, or of `shard`), the most rows any
    Sort node takes in, and the rows of `checkpoints`."""
    with psycopg.connect(uri, autocommit=True) as conn:
        within = None
        if shard is not None:
            within = shards.range_of(conn.execute(shards.SAMPLE_SQL).fetchall(), shard)
        selection = Selection(shard=shard)
        query, params = scan_sql.heads_query(selection, shards.first_cursor(within), within)
        explain = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, FORMAT {}) " + query
        text = [row[0] for row in conn.execute(explain.format("TEXT"), params).fetchall()]
        plan = conn.execute(explain.format("JSON"), params).fetchone()
        rows = conn.execute("SELECT count(*) FROM checkpoints").fetchone()
    assert plan is not None and rows is not None
    return text, _most_sorted(plan[0][0]["Plan"]), int(rows[0])


def _most_sorted(node: dict[str, Any]) -> int:
    children = node.get("Plans", [])
    most = max((_most_sorted(child) for child in children), default=0)
    if node["Node Type"] == "Sort":
        most = max(most, sum(int(child["Actual Rows"]) for child in children))
    return most


def scan_seconds(uri: str) -> tuple[float, int]:
    with scan_saver(uri) as saver:
        seconds, report = timed(lambda: scan(saver))
    return seconds, report.threads_scanned


def repair_and_undo(uri: str) -> tuple[float, float, int]:
    """Seconds of `repair` and of `undo` of that run, and the threads repaired."""
    with repair_saver(uri) as saver:
        repair_time, report = timed(lambda: repair_threads(saver, min_idle=timedelta(0)))
        undo_time, undone = timed(lambda: undo_run(saver, report.run_id))
    assert undone.threads_restored == report.threads_repaired
    return repair_time, undo_time, report.threads_repaired


def peak_command_memory(uri: str, flag: str) -> int:
    """Peak Python memory of `langgraph-repair scan --min-idle 0 FLAG` run in this
    process, what it prints thrown away (stderr too: no progress bar)."""
    with open(os.devnull, "w") as out, contextlib.redirect_stderr(out):
        tracemalloc.start()
        code = command(["scan", uri, "--min-idle", "0", flag], out=out)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert code == 0, f"scan {flag} failed ({code})"
    return peak


def warm_up(uri: str) -> None:
    """One untraced command on one thread first, so that what the first command alone
    builds (modules imported on first use) weighs on neither store's figure."""
    with open(os.devnull, "w") as out, contextlib.redirect_stderr(out):
        for flag in ("--list", "--json"):
            command(["scan", uri, "--min-idle", "0", "--thread", "none", flag], out=out)


def memory_peaks(small: str, big: str, table: bool = True) -> dict[str, tuple[int, int]]:
    """Each way of scanning: its peak memory on the N/10 store and on the N store."""
    warm_up(small)
    peaks = {}
    if table:
        kept = {"max_reported_threads": TABLE_ROWS}
        peaks["the command's table"] = (
            peak_scan_memory(small, **kept),
            peak_scan_memory(big, **kept),
        )
    for flag in ("--list", "--json"):
        peaks[f"`scan {flag}`"] = (peak_command_memory(small, flag), peak_command_memory(big, flag))
    return peaks


def print_peaks(peaks: dict[str, tuple[int, int]], sizes: str) -> None:
    for kept, (small_peak, big_peak) in peaks.items():
        print(f"scan peak memory, {kept}, {sizes}: {big_peak / small_peak:.2f}x "
              f"({small_peak / 2**20:.1f} -> {big_peak / 2**20:.1f} MiB)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200_000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument(
        "--only",
        choices=["memory", "streamed", "budget"],
        help="the memory figures alone (streamed: those of scan --list and --json), or the"
        " budget column alone",
    )
    parser.add_argument("--budget-rounds", type=int, default=BUDGET_ROUNDS)
    args = parser.parse_args()
    server, threads, rounds = args.postgres, args.threads, args.budget_rounds
    sizes = f"{threads:,} / {threads // 10:,} threads"
    if args.only == "budget":
        budget_main(server, threads, rounds)
        return
    with bench_database(server) as database:
        small, small_seed = seed(database, "small", threads // 10)
        big, big_seed = seed(database, "big", threads)
        print(f"seeded {threads:,} threads in {big_seed:.0f} s ({threads // 10:,} in "
              f"{small_seed:.0f} s), {threads // BROKEN_EVERY:,} broken")  # fmt: skip
        if args.only is not None:
            print_peaks(memory_peaks(small, big, table=args.only == "memory"), sizes)
            return
        whole_reads, whole = command_reads(server, big, None)
        assert whole["threads_scanned"] == threads
        split = {n: shards_reads(server, big, n, whole) for n in (2, 8)}
        one_wall, two_wall = one_command(big), side_by_side(big, 2)
        plans = {shard: first_page_plan(big, shard) for shard in (None, (3, 8))}
        (small_scan, small_heads), (big_scan, big_heads) = scan_seconds(small), scan_seconds(big)
        peaks = memory_peaks(small, big)
        budget = budget_figures(server, big, threads, rounds)
        small_repair, small_undo, small_repaired = repair_and_undo(small)
        big_repair, big_undo, big_repaired = repair_and_undo(big)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite"
        seed_sqlite(path, threads)
        sqlite_walls = budget_walls(f"sqlite:///{path}", rounds)
    print(DEFINITIONS)
    for n, reads in split.items():
        print(f"{n} shards / one scan: tuples {reads.tuples / whole_reads.tuples:.3f}x, "
              f"buffers {reads.buffers / whole_reads.buffers:.3f}x "
              f"({reads.tuples:,} / {whole_reads.tuples:,} tuples, "
              f"{reads.buffers:,} / {whole_reads.buffers:,} buffers)")  # fmt: skip
    print(f"2 shards side by side / one scan, wall time: {two_wall / one_wall:.2f}x "
          f"({two_wall:.1f} s / {one_wall:.1f} s)")  # fmt: skip
    per_thread("scan throughput per thread", sizes, small_scan / small_heads, big_scan / big_heads)
    print_peaks(peaks, sizes)
    repairs = f"{big_repaired:,} / {small_repaired:,} repairs"
    small_each, big_each = small_repair / small_repaired, big_repair / big_repaired
    per_thread("repair throughput per repaired thread", repairs, small_each, big_each)
    small_each, big_each = small_undo / small_repaired, big_undo / big_repaired
    per_thread("undo throughput per restored thread", repairs, small_each, big_each)
    print(budget_definitions(rounds))
    print_budget(*budget, sqlite_walls)
    for shard, (text, most, rows) in plans.items():
        name = "unsharded" if shard is None else f"shard {shard[0]}/{shard[1]}"
        verdict = "a sort of the whole table" if most >= rows // 2 else "no sort of the whole table"
        print(f"\nEXPLAIN of the first head page, {name}: {verdict} (largest Sort input: "
              f"{most:,} rows; checkpoints: {rows:,} rows)")  # fmt: skip
        print("\n".join(f"    {line}" for line in text))


def per_thread(label: str, sizes: str, small_each: float, big_each: float) -> None:
    """Throughput of the big store against the small one (1.00x: as fast per thread)."""
    print(f"{label}, {sizes}: {small_each / big_each:.2f}x "
          f"({1 / big_each:,.0f} / {1 / small_each:,.0f} threads/s)")  # fmt: skip


def budget_definitions(rounds: int) -> str:
    return f"""
budget / none = the `scan` command with `--policy max_input_tokens=200000` against the
same command without it, on the same store in the same run: wall time, process start
to exit, the median of {rounds} rounds of the two back to back (their order alternating);
reads as in the first lines, of one command each. SQLite: a file of as many threads,
seeded alike (SQLite has no first look: both scans load every head)."""


DEFINITIONS = """
tuples = tup_returned + tup_fetched, buffers = blks_hit + blks_read, of the benchmark's
own database in pg_stat_database, deltas around each command (every backend exited,
pg_stat_clear_snapshot()); "N shards" is the sum over `scan --shard K/N`, K = 0..N-1,
run one after another; "one scan" is one unsharded `scan` command. Wall times are of
the commands, process start to exit. Throughput and memory are of scans run in this
process (`bench_batch.py`'s scan: strict serializer, concurrency 4; `scan --list` and
`scan --json`: the command itself, its output thrown away); repair and undo
likewise, per thread repaired; a throughput ratio of 1.00x is as fast per thread."""


if __name__ == "__main__":
    main()
