"""What stale answers cost a `langgraph-repair scan` of a large PostgreSQL store.

Seeds two stores of N threads (default 200,000) as `bench_scale.py` seeds its own
(template threads written by LangGraph, copied in SQL under new ids, 1% broken):

- the *waiting* store, where 1% of the heads wait on a human, half of them holding
  a stale answer: a real graph (`StateGraph(MessagesState)`, one node asking twice)
  answered its first question with `Command(resume="yes")`; the other half wait on
  their first question;
- its *twin*, the same store with those heads clean instead.

Then `scan` of each, as commands, in alternating order, `--rounds` times: the median
wall time of each and the ratio waiting / twin (goal: at most 1.1x), and the
database's reads of one scan of each (tuples: tup_returned + tup_fetched; buffers:
blks_hit + blks_read, from pg_stat_database). The waiting store's scan must report
every stale answer.

    python benchmarks/bench_waiting.py [--threads 200000] [--rounds 5]
        [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench_engine import make_history
from bench_scale import COLUMNS, MESSAGES, bench_database, command_reads, finished, start_scan
from bench_scale import seed as seed_store
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

WAITING_EVERY = 200  # of every 200 heads: one stale, one on its first question (1%)
TABLES = {
    **COLUMNS,
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
    "type, blob",
}
COPY_SQL = """
INSERT INTO {table} (thread_id, {columns})
SELECT md5('thread-' || n)::uuid::text, {columns}
FROM generate_series(0, %(threads)s - 1) AS n
JOIN {table} ON thread_id = CASE
    WHEN n %% 100 = 0 THEN 'template-broken'
    WHEN {waiting} AND n %% {every} = 1 THEN 'template-stale'
    WHEN {waiting} AND n %% {every} = 101 THEN 'template-first'
    ELSE 'template-clean' END
ORDER BY n"""


def ask_twice(state: MessagesState) -> dict[str, Any]:
    first = interrupt("approve the refund?")
    second = interrupt("confirm the amount?")
    return {"messages": [("ai", f"{first} / {second}")]}


def write_waiting(saver: PostgresSaver) -> None:
    """Two threads of a real graph, each with a history of MESSAGES messages: one holding
    a stale answer (its first question answered), one waiting on its first question."""
    graph = StateGraph(MessagesState).add_node("ask", ask_twice).add_edge(START, "ask")
    app = graph.compile(checkpointer=saver)
    history: list[Any] = list(make_history(MESSAGES, None))
    for thread_id in ("template-stale", "template-first"):
        app.invoke({"messages": history}, {"configurable": {"thread_id": thread_id}})
    app.invoke(Command(resume="yes"), {"configurable": {"thread_id": "template-stale"}})


def seed(database_uri: str, schema: str, threads: int, waiting: bool) -> str:
    """A store of `threads` threads in `schema` (with waiting heads or without); its URI."""
    flag = str(waiting).upper()
    copies = {
        table: COPY_SQL.format(table=table, columns=columns, every=WAITING_EVERY, waiting=flag)
        for table, columns in TABLES.items()
    }
    return seed_store(database_uri, schema, threads, write_waiting, copies)[0]


def one_scan(uri: str) -> float:
    start = time.perf_counter()
    finished(start_scan(uri, None))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with bench_database(args.postgres) as database:
        start = time.perf_counter()
        waiting = seed(database, "waiting", args.threads, waiting=True)
        twin = seed(database, "twin", args.threads, waiting=False)
        print(f"seeded 2 x {args.threads:,} threads in {time.perf_counter() - start:.0f} s")
        reads_waiting, summary = command_reads(args.postgres, waiting, None)
        reads_twin, plain = command_reads(args.postgres, twin, None)
        stale = args.threads // WAITING_EVERY
        assert summary.get("findings", {}).get("stale_resume") == stale, summary
        assert summary["threads_scanned"] == plain["threads_scanned"] == args.threads
        walls: dict[str, list[float]] = {"waiting": [], "twin": []}
        for turn in range(args.rounds):
            order = ("waiting", "twin") if turn % 2 == 0 else ("twin", "waiting")
            for name in order:
                walls[name].append(one_scan(waiting if name == "waiting" else twin))
    print(f"stale answers found: {stale:,} (1% of heads waiting, half of them stale)")
    for n, (w, t) in enumerate(zip(walls["waiting"], walls["twin"], strict=True), start=1):
        print(f"round {n}: waiting {w:.1f} s, twin {t:.1f} s, {w / t:.2f}x")
    median_w, median_t = statistics.median(walls["waiting"]), statistics.median(walls["twin"])
    print(f"scan wall time, median: {median_w / median_t:.2f}x (goal: at most 1.1x)")
    print(
        f"database reads of one scan: tuples {reads_waiting.tuples / reads_twin.tuples:.3f}x "
        f"({reads_waiting.tuples:,} / {reads_twin.tuples:,}), buffers "
        f"{reads_waiting.buffers / reads_twin.buffers:.3f}x "
        f"({reads_waiting.buffers:,} / {reads_twin.buffers:,})"
    )


if __name__ == "__main__":
    main()
