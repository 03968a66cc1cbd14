"""What a LangGraph.js store costs to scan, against its Python twin and against reading it.

The real LangGraph.js application of `tests/js_app` (run `npm ci` there first) writes one
thread on PostgreSQL: five tool turns (asked, interrupted before the tool, resumed) and
five chat turns, 30 messages. Its head, read back (every channel), is written by
LangGraph's own PostgresSaver as the Python twin. Each head (its checkpoint row, its blobs and its
pending writes) is copied under N thread ids (default 20,000) by one INSERT ... SELECT
per table, and the template's own history deleted, each store in its own schema of a
database of this benchmark's own. Then
`ROUNDS` rounds, in one process, of three measures back to back (their order rotating):

- `scan` of the LangGraph.js store (`repair_threads`, a dry run, as the command runs it);
- `scan` of the Python store;
- the floor: the LangGraph.js store's head pages as the scan reads them (its own query,
  binary), each `json` blob parsed with `json.loads`.

Printed, each a ratio of two times of the same round: JS scan / Python scan (goal: at
most 1.25x) and JS scan / floor (goal: at most 2x); and the database's own work of one
scan of each store (pg_stat_database: tuples and buffers), and the plan of the first
head page of the LangGraph.js store (EXPLAIN ANALYZE).

Then the same on SQLite, where no store has a first look and every head is loaded:
the application writes the thread in a file of its own, LangGraph's SqliteSaver its
twin, each head copied under N ids in SQL; JS scan / Python scan, and JS scan / the
floor of reading the heads' rows and parsing their JSON.

    python benchmarks/bench_js.py [--threads 20000] [--rounds 5] [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from bench_batch import raw_read, rotated_rounds, scan, scan_saver
from bench_scale import Reads, bench_database, database_reads, in_database
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.stores.base import Selection
from langgraph_checkpoint_repair.stores.postgres import base as scan_sql
from langgraph_checkpoint_repair.targets import open_saver

APP = Path(__file__).resolve().parents[1] / "tests" / "js_app"
TEMPLATE = "template"
COPY_SQL = {
    "checkpoints": "checkpoint_id = %(head)s",
    "checkpoint_blobs": (
        "(channel, version) IN (SELECT key, value FROM jsonb_each_text(%(versions)s))"
    ),
    "checkpoint_writes": "checkpoint_id = %(head)s",
}
"""Per table, the template's rows that belong to its head."""


SQLITE_COPY_SQL = """
WITH RECURSIVE n (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
    checkpoint, metadata)
SELECT printf('thread-%07d', x), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
    checkpoint, metadata
FROM n JOIN checkpoints ON thread_id = 'template' AND checkpoint_id = ?"""


def js_template(uri: str, schema: str) -> None:
    """The thread, written by the LangGraph.js application itself."""
    run_app({"JS_APP_POSTGRES_URI": uri, "JS_APP_SCHEMA": schema})


ROUNDS_TITLE = "rounds: JS scan / Python scan (goal <= 1.25x), JS scan / floor (goal <= 2x)"


def run_app(settings: dict[str, str]) -> None:
    env = {**os.environ, **settings}
    for turn in range(5):
        for argv in (["turn", f"weather in City{turn}"], ["resume"], ["turn", f"hello {turn}"]):
            done = subprocess.run(
                ["node", "app.mjs", argv[0], TEMPLATE, *argv[1:]],
                cwd=APP, env=env, capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"the LangGraph.js application failed: {done.stdout}{done.stderr}")


def head_of(conn: psycopg.Connection[Any]) -> tuple[str, Any]:
    row = conn.execute(
        "SELECT checkpoint_id, checkpoint -> 'channel_versions' FROM checkpoints "
        "WHERE thread_id = %s ORDER BY checkpoint_id DESC LIMIT 1",
        (TEMPLATE,),
    ).fetchone()
    assert row is not None
    return row[0], row[1]


def python_twin(js_target: str, saver: Any) -> int:
    """The JavaScript thread's head, every channel of it, written by LangGraph's own
    `saver` (its versions counted as LangGraph counts them)."""
    with open_saver(js_target) as js_saver:
        head = js_saver.get_tuple({"configurable": {"thread_id": TEMPLATE, "checkpoint_ns": ""}})
    assert head is not None
    values = head.checkpoint["channel_values"]
    assert len(values["messages"]) == 30, len(values["messages"])
    with saver as opened:
        opened.setup()
        checkpoint = empty_checkpoint()
        checkpoint["ts"] = head.checkpoint["ts"]
        version = opened.get_next_version(None, None)
        checkpoint["channel_values"] = dict(values)
        channels = head.checkpoint["channel_versions"]  # those without a value too
        checkpoint["channel_versions"] = {channel: version for channel in channels}
        config: Any = {"configurable": {"thread_id": TEMPLATE, "checkpoint_ns": ""}}
        opened.put(config, checkpoint, dict(head.metadata), dict(checkpoint["channel_versions"]))
    return len(values["messages"])


def copy_head(uri: str, threads: int) -> None:
    """The template's head under `threads` thread ids, table by table, as stored."""
    with psycopg.connect(uri, autocommit=True) as conn:
        head, versions = head_of(conn)
        params = {"head": head, "versions": json.dumps(versions), "threads": threads}
        for table, where in COPY_SQL.items():
            columns = [
                row[0]
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND table_schema = current_schema() AND column_name <> 'thread_id' "
                    "ORDER BY ordinal_position",
                    (table,),
                )
            ]
            listed = ", ".join(columns)
            conn.execute(
                f"INSERT INTO {table} (thread_id, {listed}) "  # our own names
                f"SELECT 'thread-' || lpad(n::text, 7, '0'), {listed} "
                f"FROM {table}, generate_series(1, %(threads)s) AS n "
                f"WHERE thread_id = '{TEMPLATE}' AND {where}",
                params,
            )
        for table in COPY_SQL:  # the template's history goes: the store holds the copies alone
            conn.execute(f"DELETE FROM {table} WHERE thread_id = %s", (TEMPLATE,))
        conn.execute("VACUUM ANALYZE")  # no dead rows left for the scan to step over


def scan_once(uri: str) -> Callable[[], Any]:
    def run() -> Any:
        with scan_saver(uri) as saver:
            report = scan(saver)
        assert report.threads_scanned > 0 and not report.errors, report.errors
        return report

    return run


def parse_json(type_: str, blob: bytes) -> Any:
    return json.loads(blob) if type_ == "json" else None


def rounds_of(js_uri: str, py_uri: str, rounds: int) -> tuple[list[float], list[float]]:
    """Per round, JS scan / Python scan and JS scan / floor, on PostgreSQL."""
    works = [
        scan_once(js_uri),
        scan_once(py_uri),
        lambda: raw_read(js_uri, parse_json, binary=True),
    ]
    return rounds_over(works, rounds)


def rounds_over(works: list[Callable[[], Any]], rounds: int) -> tuple[list[float], list[float]]:
    """Per round of the three `works` (JS scan, Python scan, floor), the two ratios."""
    for work in works[:2]:
        work()  # warm the store's pages (the server's cache, the file's)
    against_python, against_floor = [], []
    for turn, seconds in enumerate(rotated_rounds(works, rounds)):
        against_python.append(seconds[0] / seconds[1])
        against_floor.append(seconds[0] / seconds[2])
        print(f"  round {turn + 1}: {against_python[-1]:.2f}x  {against_floor[-1]:.2f}x")
    return against_python, against_floor


def reads_of(server: str, work: Callable[[], Any]) -> Reads:
    before = database_reads(server)
    work()
    return database_reads(server) - before


def first_page_plan(uri: str) -> list[str]:
    query, params = scan_sql.heads_query(Selection(), None)
    with psycopg.connect(uri) as conn:
        rows = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query}", params).fetchall()
    return [row[0] for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["postgres", "sqlite"])
    parser.add_argument(
        "--postgres",
        default=os.environ.get("TEST_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/test"),
    )
    args = parser.parse_args()
    if args.only != "sqlite":
        postgres_main(args.postgres, args.threads, args.rounds)
    if args.only != "postgres":
        sqlite_main(args.threads, args.rounds)


def postgres_main(server: str, threads: int, rounds: int) -> None:
    with bench_database(server) as database:
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA js; CREATE SCHEMA py")
        js_uri, py_uri = (
            in_database(database, _name(database), "js"),
            in_database(database, _name(database), "py"),
        )
        js_template(database, "js")
        size = python_twin(js_uri, PostgresSaver.from_conn_string(py_uri))
        for uri in (js_uri, py_uri):
            copy_head(uri, threads)
        print(f"{threads:,} threads of {size} messages in each store")
        print(ROUNDS_TITLE)
        python, floor = rounds_of(js_uri, py_uri, rounds)
        print(f"median: {statistics.median(python):.2f}x  {statistics.median(floor):.2f}x")
        js_reads = reads_of(server, scan_once(js_uri))
        py_reads = reads_of(server, scan_once(py_uri))
        print(
            f"database work of one scan, JS / Python: tuples {js_reads.tuples:,} / "
            f"{py_reads.tuples:,}, buffers {js_reads.buffers:,} / {py_reads.buffers:,}"
        )
        print("plan of the first head page of the LangGraph.js store:")
        for line in first_page_plan(js_uri)[:12]:
            print(f"  {line}")


def sqlite_main(threads: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        js_file, py_file = Path(folder, "js.sqlite"), Path(folder, "py.sqlite")
        run_app({"JS_APP_SQLITE_PATH": str(js_file)})
        js_target, py_target = f"sqlite:///{js_file}", f"sqlite:///{py_file}"
        python_twin(js_target, SqliteSaver.from_conn_string(str(py_file)))
        for path in (js_file, py_file):
            with contextlib.closing(sqlite3.connect(path)) as conn, conn:
                (head,) = conn.execute(
                    "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?", (TEMPLATE,)
                ).fetchone()
                conn.execute(SQLITE_COPY_SQL, (threads, head))
                for table in ("checkpoints", "writes"):
                    conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (TEMPLATE,))
        print(f"SQLite: {threads:,} threads in each file")
        print(ROUNDS_TITLE)
        works = [scan_once(js_target), scan_once(py_target), lambda: read_sqlite(js_file)]
        python, floor = rounds_over(works, rounds)
        print(f"median: {statistics.median(python):.2f}x  {statistics.median(floor):.2f}x")


def read_sqlite(path: Path) -> int:
    """The floor on SQLite: each head's row, its JSON parsed."""
    heads = 0
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
        for (checkpoint,) in conn.execute(
            "SELECT checkpoint FROM checkpoints c WHERE checkpoint_id = (SELECT max(checkpoint_id) "
            "FROM checkpoints WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns)"
        ):
            json.loads(checkpoint)
            heads += 1
    return heads


def _name(uri: str) -> str:
    return uri.rsplit("/", 1)[-1].split("?", 1)[0]


if __name__ == "__main__":
    main()
