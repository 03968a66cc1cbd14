"""`prune` against LangGraph's own `PostgresSaver.prune(ids, strategy="keep_latest")`.

Seeds a PostgreSQL store of N checkpoints (default 200,000), each with its pending
writes: LangGraph's PostgresSaver writes one template thread of TURNS chat turns (a
real graph, plain `messages`), and one INSERT ... SELECT over generate_series per
table copies it under new thread ids. The store lives in a database of its own; two
identical copies of it are made with CREATE DATABASE ... TEMPLATE. Then, each figure
from the same run:

- wall time of a default `prune` (archive on, every thread) on one copy against
  LangGraph's prune of every thread on the other: the ratio (goal: at most 1.00x),
  and the database's own work for each (pg_stat_database tuples and buffers);
- whether the two copies hold the same rows afterwards (a digest per table);
- with `--delta`, on a store of delta threads seeded the same way (which LangGraph
  refuses), the rows and bytes `prune` frees;
- with `--undo`, on SQLite and PostgreSQL stores shaped as a coding agent's (threads
  whose every turn replaces a large bytes payload kept in a delta channel of the
  application's own, so no snapshot is due yet), RUNS runs of `prune --compact` with
  the graph and of its `undo`, each on a fresh copy: the undo / prune ratio (goal: at
  most 2.00x), the database's work for each on PostgreSQL, and whether undo put every
  row back (a digest of every table);
- with `--memory`, the peak resident memory of a `prune` run in a process of its own
  on stores of 100,000, 300,000 and 1,000,000 checkpoints (a prune holds one page of
  threads at a time, so the peak should not grow with the store).

    python benchmarks/bench_prune.py [--checkpoints 200000] [--delta] [--undo] [--memory]
        [--postgres ...]
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from psycopg.rows import dict_row
from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph_checkpoint_repair.batch.pruning import prune_threads

TURNS = 5
"""Chat turns of the template thread: 3 checkpoints a turn."""
TABLES = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, "
    "task_path",
}
COPY_SQL = """
INSERT INTO {table} (thread_id, {columns})
SELECT 'thread-' || lpad(n::text, 8, '0'), {columns}
FROM {table}, generate_series(1, %(threads)s) AS n
WHERE thread_id = %(template)s"""
DIGEST_SQL = "SELECT count(*), md5(string_agg(md5(t::text), '' ORDER BY t::text)) FROM {table} t"
READS_SQL = """
SELECT tup_returned + tup_fetched, blks_hit + blks_read FROM pg_stat_database WHERE datname = %s"""


def in_database(server: str, database: str) -> str:
    parts = urlsplit(server)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, ""))


@contextlib.contextmanager
def databases(server: str, names: list[str]) -> Iterator[None]:
    try:
        yield
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            for name in names:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@dataclass(frozen=True)
class Shape:
    """How the template thread is written: its turns, and how long each message is."""

    name: str
    turns: int
    words: int


SHAPES = {
    "copies": Shape("small copied threads", TURNS, 8),
    "growing": Shape("growing chat threads", 3, 1000),
}
"""`copies`: short messages, the store the first figures were measured on. `growing`:
real chat turns (about 2 KB a message), so each checkpoint holds a new version of a
message list that grows; LangGraph's prune and ours then differ most."""


def chat(saver: PostgresSaver, delta: bool = False, words: int = 8) -> Any:
    """One node over `messages`: plain (add_messages), or a delta channel as deep agents
    keep it (a snapshot every `SNAPSHOT_EVERY` updates)."""
    builder = StateGraph(delta_state() if delta else MessagesState)
    reply = "a reply of some length " * words
    builder.add_node("chat", lambda state: {"messages": [AIMessage(reply)]})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


SNAPSHOT_EVERY = 4


def delta_state() -> Any:
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph.message import _messages_delta_reducer

    reducer: Any = _messages_delta_reducer
    channel: Any = DeltaChannel(reducer, snapshot_frequency=SNAPSHOT_EVERY)
    return TypedDict("DeltaChat", {"messages": Annotated[list[AnyMessage], channel]})  # type: ignore[operator]


def seed(uri: str, checkpoints: int, delta: bool = False, shape: Shape = SHAPES["copies"]) -> int:
    """The store, from one template thread; the number of threads."""
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        graph = chat(saver, delta, shape.words)
        config: Any = {"configurable": {"thread_id": "template"}}
        for turn in range(shape.turns):
            question = f"question {turn} " * (20 * shape.words // 8)
            graph.invoke({"messages": [HumanMessage(question)]}, config)
        found = conn.execute("SELECT count(*) AS n FROM checkpoints WHERE thread_id = 'template'")
        row = found.fetchone()
        assert row is not None
        threads = max(1, checkpoints // int(row["n"]))
        for table, columns in TABLES.items():
            copy = COPY_SQL.format(table=table, columns=columns)
            conn.execute(copy, {"threads": threads, "template": "template"})
            conn.execute(f"DELETE FROM {table} WHERE thread_id = 'template'")
        conn.execute("VACUUM ANALYZE")
    return threads


@dataclass(frozen=True)
class Work:
    seconds: float
    tuples: int
    buffers: int


def reads(server: str, database: str) -> tuple[int, int]:
    with psycopg.connect(server, autocommit=True) as conn:
        while conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
        ).fetchone() != (0,):
            time.sleep(0.05)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(READS_SQL, (database,)).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def timed(server: str, database: str, prune: Any) -> Work:
    before = reads(server, database)
    uri = in_database(server, database)
    with psycopg.connect(uri) as conn:
        ids = [str(row[0]) for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    with PostgresSaver.from_conn_string(uri) as saver:
        start = time.perf_counter()
        prune(saver, ids)
        seconds = time.perf_counter() - start
    after = reads(server, database)
    return Work(seconds, after[0] - before[0], after[1] - before[1])


def digest(uri: str) -> dict[str, Any]:
    with psycopg.connect(uri) as conn:
        return {table: conn.execute(DIGEST_SQL.format(table=table)).fetchone() for table in TABLES}


def theirs(saver: PostgresSaver, ids: list[str]) -> None:
    saver.prune(ids, strategy="keep_latest")


def ours(saver: PostgresSaver, ids: list[str]) -> None:
    prune_threads(saver, min_idle=timedelta(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=200_000)
    parser.add_argument(
        "--shape", action="append", choices=sorted(SHAPES),
        help="the store compared with LangGraph's keep_latest (repeatable; default: copies)",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=1, help="runs of each comparison")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument(
        "--delta", action="store_true", help="also a store of delta threads (LangGraph >= 1.2)"
    )
    parser.add_argument(
        "--undo", action="store_true", help="also undo against prune on payload threads"
    )
    parser.add_argument(
        "--no-keep-latest", action="store_true",
        help="skip the comparison with LangGraph's keep_latest (run only the parts asked for)",
    )  # fmt: skip
    parser.add_argument(
        "--memory", action="store_true", help="also peak memory from 100k to 1M checkpoints"
    )
    parser.add_argument("--prune-in", help=argparse.SUPPRESS)  # the child of --memory
    args = parser.parse_args()
    if args.prune_in:
        return prune_and_measure(args.prune_in)
    tag = uuid.uuid4().hex[:8]
    for name in [] if args.no_keep_latest else args.shape or ["copies"]:
        for run in range(args.runs):
            keep_latest_part(args.postgres, f"{tag}{run}", args.checkpoints, SHAPES[name])
    if args.delta:
        delta_part(args.postgres, tag, args.checkpoints)
    if args.undo:
        undo_part(args.postgres, tag)
    if args.memory:
        memory_part(args.postgres, tag)


def keep_latest_part(server: str, tag: str, checkpoints: int, shape: Shape) -> None:
    """`prune` against LangGraph's keep_latest on two copies of one store."""
    seeded, a, b = (f"bench_prune_{tag}_{name}" for name in ("seed", "langgraph", "ours"))
    with databases(server, [a, b, seeded]):
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {seeded}")
        start = time.perf_counter()
        threads = seed(in_database(server, seeded), checkpoints, shape=shape)
        print(f"seeded {threads:,} threads in {time.perf_counter() - start:.1f} s")
        with psycopg.connect(server, autocommit=True) as conn:
            for name in (a, b):
                conn.execute(f"CREATE DATABASE {name} TEMPLATE {seeded}")
        # Ours first, then LangGraph's: the server's caches are no warmer for ours.
        mine = timed(server, b, ours)
        langgraph = timed(server, a, theirs)
        same = digest(in_database(server, a)) == digest(in_database(server, b))
    print(f"store of {shape.name}: {checkpoints:,} checkpoints, {threads:,} threads")
    for name, work in (("LangGraph keep_latest", langgraph), ("prune (archive on)", mine)):
        figures = f"{work.seconds:8.2f} s  {work.tuples:12,} tuples  {work.buffers:12,} buffers"
        print(f"{name:24} {figures}")
    print(
        f"prune / LangGraph: {mine.seconds / langgraph.seconds:.2f}x time, "
        f"{mine.tuples / max(langgraph.tuples, 1):.2f}x tuples, "
        f"{mine.buffers / max(langgraph.buffers, 1):.2f}x buffers"
    )
    print(f"the same rows left: {same}")


def delta_part(server: str, tag: str, checkpoints: int) -> None:
    """A store of delta threads: LangGraph's prune refuses it; what `prune` frees, on
    one copy as it is and on another with `--compact`."""
    name, compacted = f"bench_prune_{tag}_delta", f"bench_prune_{tag}_compact"
    with databases(server, [compacted, name]):
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        uri = in_database(server, name)
        threads = seed(uri, checkpoints, delta=True)
        before = digest(uri)
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {compacted} TEMPLATE {name}")
        with PostgresSaver.from_conn_string(uri) as saver:
            try:
                saver.prune(["thread-00000001"], strategy="keep_latest")
                refused = "accepted"
            except NotImplementedError as error:
                refused = f"refused ({str(error)[:60]}...)"
        print(f"delta store: {checkpoints:,} checkpoints, {threads:,} threads")
        print(f"LangGraph keep_latest: {refused}")
        for label, database, compact in (
            ("prune", name, False),
            ("prune --compact", compacted, True),
        ):
            target = in_database(server, database)
            with PostgresSaver.from_conn_string(target) as saver:
                start = time.perf_counter()
                report = prune_threads(saver, min_idle=timedelta(0), compact=compact)
                seconds = time.perf_counter() - start
            after = digest(target)
            rows = {table: f"{before[table][0]:,} -> {after[table][0]:,}" for table in TABLES}
            freed = sum(report.deleted.bytes.values())
            print(f"{label}: {seconds:.2f} s, rows {rows}, {freed:,} bytes freed")


PAYLOAD_THREADS, PAYLOAD_TURNS, PAYLOAD_BYTES = 2, 40, 1024 * 1024
STEPS_PER_TURN = 25
"""Checkpoints a turn writes (a deep agent's turn is many model and tool steps)."""
RUNS = 5


def payload_graph(saver: Any) -> Any:
    """A turn replies and replaces a bytes payload (last value wins), both delta channels
    with no snapshot due for fifty updates, as a coding agent keeps its workspace."""
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph.message import _messages_delta_reducer

    def last(state: bytes, writes: Any) -> bytes:
        return writes[-1] if writes else state

    reducer: Any = _messages_delta_reducer
    fields = {
        "messages": Annotated[list[AnyMessage], DeltaChannel(reducer, snapshot_frequency=50)],
        "payload": Annotated[bytes, DeltaChannel(last, snapshot_frequency=50)],
    }
    builder = StateGraph(TypedDict("Workspace", fields))  # type: ignore[operator]

    def work(state: Any) -> dict[str, Any]:
        """A step of the turn; its first replaces the payload."""
        done = len(state["messages"])
        if isinstance(state["messages"][-1], HumanMessage):
            body = (f"turn {done}:".encode() + bytes(range(256))) * (PAYLOAD_BYTES // 264)
            return {"messages": [AIMessage(f"step {done}")], "payload": body}
        return {"messages": [AIMessage(f"step {done}")]}

    def more(state: Any) -> str:
        since = next(i for i, m in enumerate(reversed(state["messages"])) if m.type == "human")
        return "work" if since < STEPS_PER_TURN else END

    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_conditional_edges("work", more, ["work", END])
    return builder.compile(checkpointer=saver)


def seed_payloads(saver: Any) -> None:
    graph = payload_graph(saver)
    for n in range(PAYLOAD_THREADS):
        config: Any = {"configurable": {"thread_id": f"coder-{n}"}}
        for turn in range(PAYLOAD_TURNS):
            graph.invoke(
                {"messages": [HumanMessage(f"task {turn}")]}, {**config, "recursion_limit": 100}
            )


def sqlite_digest(path: Path) -> dict[str, Any]:
    import hashlib
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {
            table: hashlib.sha256(
                repr(conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4").fetchall()).encode()
            ).hexdigest()
            for table in ("checkpoints", "writes")
        }


def undo_part(server: str, tag: str) -> None:
    """Prune --compact, then undo, RUNS times each on a fresh copy of one seeded store."""
    graph = payload_graph(None)
    shape = (
        f"{PAYLOAD_THREADS} threads x {PAYLOAD_TURNS} turns of {STEPS_PER_TURN} steps, "
        f"a {PAYLOAD_BYTES:,}-byte payload a turn"
    )
    print(f"undo against prune --compact ({shape}):")
    sqlite_undo(graph)
    postgres_undo(server, tag, graph)


def sqlite_undo(graph: Any) -> None:
    import shutil
    import sqlite3
    import tempfile

    from langgraph.checkpoint.sqlite import SqliteSaver

    from langgraph_checkpoint_repair.batch.pruning import undo_prune

    with tempfile.TemporaryDirectory() as folder:
        seeded = Path(folder) / "seed.sqlite"
        with contextlib.closing(sqlite3.connect(seeded, check_same_thread=False)) as conn:
            seed_payloads(SqliteSaver(conn))
        before = sqlite_digest(seeded)
        for run in range(RUNS):
            path = Path(folder) / f"run{run}.sqlite"
            shutil.copy(seeded, path)
            with contextlib.closing(sqlite3.connect(path, check_same_thread=False)) as conn:
                saver = SqliteSaver(conn)
                start = time.perf_counter()
                report = prune_threads(saver, min_idle=timedelta(0), compact=True, graph=graph)
                pruned = time.perf_counter() - start
                start = time.perf_counter()
                undo_prune(saver, report.run_id)
                undone = time.perf_counter() - start
            same = sqlite_digest(path) == before
            deleted = report.deleted.rows["checkpoints"]
            print(
                f"  SQLite run {run + 1}: prune {pruned:6.2f} s ({deleted:,} checkpoints), "
                f"undo {undone:6.2f} s: {undone / pruned:.2f}x; every row back: {same}"
            )


def postgres_undo(server: str, tag: str, graph: Any) -> None:
    seeded_pg = f"bench_prune_{tag}_payload"
    copies = [f"{seeded_pg}_{run}" for run in range(RUNS)]
    with databases(server, [*copies, seeded_pg]):
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {seeded_pg}")
        with PostgresSaver.from_conn_string(in_database(server, seeded_pg)) as saver:
            saver.setup()
            seed_payloads(saver)
        before_pg = digest(in_database(server, seeded_pg))
        for run, copy in enumerate(copies):
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {copy} TEMPLATE {seeded_pg}")
            prune, undo = prune_then_undo(server, copy, graph)
            same = digest(in_database(server, copy)) == before_pg
            print(
                f"  PostgreSQL run {run + 1}: prune {prune.seconds:6.2f} s "
                f"({prune.tuples:,} tuples, {prune.buffers:,} buffers), undo {undo.seconds:6.2f} s "
                f"({undo.tuples:,} tuples, {undo.buffers:,} buffers): "
                f"{undo.seconds / prune.seconds:.2f}x; every row back: {same}"
            )


def prune_then_undo(server: str, database: str, graph: Any) -> tuple[Work, Work]:
    """A compacting prune of every thread, then its undo, each timed and measured."""
    done: list[Any] = []

    def prune(saver: PostgresSaver, ids: list[str]) -> None:
        done.append(prune_threads(saver, min_idle=timedelta(0), compact=True, graph=graph))

    def undo(saver: PostgresSaver, ids: list[str]) -> None:
        from langgraph_checkpoint_repair.batch.pruning import undo_prune

        undo_prune(saver, done[0].run_id)

    return timed(server, database, prune), timed(server, database, undo)


MEMORY_SIZES = (100_000, 300_000, 1_000_000)


def memory_part(server: str, tag: str) -> None:
    """Peak memory of a prune, each in a fresh process, as the store grows."""
    print("memory: checkpoints, seconds, peak RSS before and after the prune")
    for size in MEMORY_SIZES:
        name = f"bench_prune_{tag}_m{size}"
        with databases(server, [name]):
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            seed(in_database(server, name), size)
            child = [sys.executable, __file__, "--prune-in", in_database(server, name)]
            line = subprocess.run(child, check=True, capture_output=True, text=True).stdout
        print(f"{size:>12,} {line.strip()}")


def prune_and_measure(uri: str) -> None:
    """In the child: one default prune of every thread, its time and peak memory."""
    with PostgresSaver.from_conn_string(uri) as saver:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        report = prune_threads(saver, min_idle=timedelta(0))
        seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    deleted = report.deleted.rows["checkpoints"]
    memory = f"{before / 1024:7.1f} MiB -> {after / 1024:7.1f} MiB"
    print(f"{seconds:8.1f} s  {memory}  ({deleted:,} deleted)")


if __name__ == "__main__":
    main()
