"""What stale answers cost a `langgraph-repair scan` of a large PostgreSQL store.

Seeds two stores of N threads (default 200,000) as `bench_scale.py` seeds its own
(template threads written by LangGraph, copied in SQL under new ids, 1% broken):

- the *waiting* store, where 1% of the heads wait on a human, half of them holding
  a stale answer: a real graph (`StateGraph(MessagesState)`, one node asking twice)
  answered its first question with `Command(resume="yes")`; the other half wait on
  their first question;
- its *twin*, the same store with those heads clean instead.

Then commands, their order rotating, `--rounds` times: `scan --json` of the waiting
store, `scan --waiting --json` of it, `scan --json` of its twin, and, with
`--reference SRC` (the `src` folder of the release to compare with, a `git worktree`
of it say), `scan --json` of the waiting store by that release. It prints each
round's ratios and their medians: waiting store / twin (what heads waiting on a
human cost), and against the reference on the waiting store, this release's scan
(what finding their stale answers and listing the waiting heads cost; goal: at most
1.1x) and its `scan --waiting` (goal: at most 1.1x); and the database's reads of one
run of each (tuples: tup_returned + tup_fetched; buffers: blks_hit + blks_read, from
pg_stat_database). The waiting store's scan must report every stale answer, and its
`scan --waiting` every waiting head.

    python benchmarks/bench_waiting.py [--threads 200000] [--rounds 5]
        [--reference ../reference/src] [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from typing import Any

from bench_engine import make_history
from bench_scale import (
    COLUMNS,
    COMMAND,
    MESSAGES,
    Reads,
    bench_database,
    database_reads,
    finished,
)
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


Run = tuple[str, str | None, tuple[str, ...]]
"""A command to time: the store's URI, the reference's src folder (None: this
release), and the options beside `--min-idle 0 --json`."""


def scan_command(uri: str, reference: str | None, more: tuple[str, ...]) -> subprocess.Popen[str]:
    """`scan` of `uri` as a command, by this release or by the one in `reference`."""
    env = dict(os.environ)
    if reference is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [reference, env.get("PYTHONPATH")]))
    argv = [*COMMAND, uri, "--min-idle", "0", "--json", *more]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def reads_of(server: str, run: Run) -> tuple[Reads, dict[str, Any]]:
    before = database_reads(server)
    summary = finished(scan_command(*run))
    return database_reads(server) - before, summary


def one_scan(run: Run) -> float:
    start = time.perf_counter()
    finished(scan_command(*run))
    return time.perf_counter() - start


def check(name: str, summary: dict[str, Any], threads: int) -> None:
    """Each run saw every head; this release's found every stale answer and every head
    waiting on a human (two of every WAITING_EVERY)."""
    assert summary["threads_scanned"] == threads, summary
    if name in ("scan", "waiting"):
        stale = summary.get("findings", {}).get("stale_resume")
        assert stale == threads // WAITING_EVERY, summary
        assert summary["waiting_heads"] == 2 * (threads // WAITING_EVERY), summary


def ratios(label: str, walls: list[float], others: list[float]) -> None:
    each = ", ".join(f"{mine / other:.2f}" for mine, other in zip(walls, others, strict=True))
    median = statistics.median(walls) / statistics.median(others)
    print(f"{label}: rounds {each}; medians {median:.2f}x")


def print_reads(label: str, mine: Reads, other: Reads) -> None:
    print(
        f"{label}: tuples {mine.tuples / other.tuples:.3f}x ({mine.tuples:,} / "
        f"{other.tuples:,}), buffers {mine.buffers / other.buffers:.3f}x "
        f"({mine.buffers:,} / {other.buffers:,})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reference", help="the src folder of the release to compare with")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    runs: dict[str, Run] = {}
    with bench_database(args.postgres) as database:
        start = time.perf_counter()
        waiting = seed(database, "waiting", args.threads, waiting=True)
        runs["scan"] = (waiting, None, ())
        runs["waiting"] = (waiting, None, ("--waiting",))
        runs["twin"] = (seed(database, "twin", args.threads, waiting=False), None, ())
        if args.reference:
            runs["reference"] = (waiting, args.reference, ())
        print(f"seeded 2 x {args.threads:,} threads in {time.perf_counter() - start:.0f} s")
        reads = {}
        for name, run in runs.items():
            reads[name], summary = reads_of(args.postgres, run)
            check(name, summary, args.threads)
        walls: dict[str, list[float]] = {name: [] for name in runs}
        names = list(runs)
        for turn in range(args.rounds):
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                walls[name].append(one_scan(runs[name]))
    print(
        f"stale answers found: {args.threads // WAITING_EVERY:,} (1% of heads waiting, half stale)"
    )
    ratios("scan wall time, waiting store / twin", walls["scan"], walls["twin"])
    print_reads("database reads, waiting store / twin", reads["scan"], reads["twin"])
    if args.reference:
        for name, label in (("scan", "scan"), ("waiting", "scan --waiting")):
            mine, theirs = walls[name], walls["reference"]
            ratios(f"{label} wall time, this release / reference", mine, theirs)
            theirs_read = reads["reference"]
            print_reads(f"{label} database reads, this / reference", reads[name], theirs_read)


if __name__ == "__main__":
    main()
