"""What checking a large PostgreSQL store against the next release's graph costs:
`langgraph-repair scan --graph` against `scan`.

Seeds a store of N threads (default 200,000) as `bench_scale.py` seeds its own
(template threads copied in SQL under new ids, 1% broken), where 1% of the heads wait
on a human: half in a node release 2 renamed (`ask`, now `ask2`), half in a node it
kept (`keep`). The threads were written by release 1 of a real graph
(`StateGraph(MessagesState)`, its router sending each thread to one of the two nodes).

Then, their order rotating, `--rounds` times: `scan --json` and `scan --graph
drift_graph.py:release_two --json` of the store. It prints each round's ratio and the
medians' (goal: at most 1.15x), and the database's reads of one run of each (tuples:
tup_returned + tup_fetched; buffers: blks_hit + blks_read, from pg_stat_database).
The graph scan must find every thread paused in the renamed node, and exit 1 for them
(the gate before a deploy).

    python benchmarks/bench_drift.py [--threads 200000] [--rounds 5] [--postgres URI]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench_engine import make_history
from bench_scale import COMMAND, MESSAGES, Reads, bench_database, database_reads
from bench_scale import seed as seed_store
from bench_waiting import TABLES
from drift_graph import release
from langgraph.checkpoint.postgres import PostgresSaver

GRAPH_FILE = Path(__file__).with_name("drift_graph.py")
PAUSED_EVERY = 200  # of every 200 heads: one in the renamed node, one in the kept one (1%)
COPY_SQL = """
INSERT INTO {table} (thread_id, {columns})
SELECT md5('thread-' || n)::uuid::text, {columns}
FROM generate_series(0, %(threads)s - 1) AS n
JOIN {table} ON thread_id = CASE
    WHEN n %% 100 = 0 THEN 'template-broken'
    WHEN n %% {every} = 1 THEN 'template-renamed'
    WHEN n %% {every} = 101 THEN 'template-kept'
    ELSE 'template-clean' END
ORDER BY n"""


def write_paused(saver: PostgresSaver) -> None:
    """Two threads of release 1, each with MESSAGES messages, paused in `ask` and `keep`."""
    app = release("ask")
    app.checkpointer = saver
    for thread_id, route in (("template-renamed", "renamed"), ("template-kept", "kept")):
        history: list[Any] = [*make_history(MESSAGES, None), ("human", route)]
        app.invoke({"messages": history}, {"configurable": {"thread_id": thread_id}})


def seed(database_uri: str, threads: int) -> str:
    copies = {
        table: COPY_SQL.format(table=table, columns=columns, every=PAUSED_EVERY)
        for table, columns in TABLES.items()
    }
    return seed_store(database_uri, "drift", threads, write_paused, copies)[0]


def scan(uri: str, graph: bool) -> tuple[float, dict[str, Any]]:
    """One `scan` command: its wall time and summary (a graph scan exits 1: it finds)."""
    argv = [*COMMAND, uri, "--min-idle", "0", "--json"]
    if graph:
        argv += ["--graph", f"{GRAPH_FILE}:release_two"]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != (1 if graph else 0):
        raise RuntimeError(f"scan exited {done.returncode}: {done.stderr.strip()}")
    return wall, json.loads(done.stdout.strip().splitlines()[-1])


def check(summary: dict[str, Any], threads: int, graph: bool) -> None:
    assert summary["threads_scanned"] == threads, summary
    stranded = summary.get("findings", {}).get("node_missing", 0)
    assert stranded == (threads // PAUSED_EVERY if graph else 0), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with bench_database(args.postgres) as database:
        start = time.perf_counter()
        uri = seed(database, args.threads)
        print(f"seeded {args.threads:,} threads in {time.perf_counter() - start:.0f} s")
        reads: dict[bool, Reads] = {}
        for graph in (False, True):
            before = database_reads(args.postgres)
            check(scan(uri, graph)[1], args.threads, graph)
            reads[graph] = database_reads(args.postgres) - before
        walls: dict[bool, list[float]] = {False: [], True: []}
        for turn in range(args.rounds):
            for graph in (turn % 2 == 1, turn % 2 == 0):
                walls[graph].append(scan(uri, graph)[0])
    each = ", ".join(f"{g / p:.2f}" for g, p in zip(walls[True], walls[False], strict=True))
    median = statistics.median(walls[True]) / statistics.median(walls[False])
    print(f"threads paused in the renamed node: {args.threads // PAUSED_EVERY:,} (found)")
    print(
        f"wall time, scan --graph / scan: rounds {each}; medians {median:.2f}x "
        f"({statistics.median(walls[True]):.1f} s / {statistics.median(walls[False]):.1f} s)"
    )
    mine, other = reads[True], reads[False]
    print(
        f"database reads, scan --graph / scan: tuples {mine.tuples / other.tuples:.3f}x "
        f"({mine.tuples:,} / {other.tuples:,}), buffers {mine.buffers / other.buffers:.3f}x "
        f"({mine.buffers:,} / {other.buffers:,})"
    )


if __name__ == "__main__":
    main()
