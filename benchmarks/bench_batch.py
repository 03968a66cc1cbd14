"""Speed and memory of `langgraph-repair scan` on seeded PostgreSQL stores.

Seeds N threads (default 20,000) of 40 messages, 2% broken, three checkpoints
each, then measures in the same run, the scan loading through the strict
serializer as the command does:

- raw read: the rows the scan reads (its own keyset-paged head queries, 1,000 heads
  a page, with the message blobs), fetched and decoded with the saver's serde; and
  the same rows decoded with plain ormsgpack (messages left as plain structures,
  the least any scan must do);
- naive walk: `list(None)` to find the heads, `get_tuple` per head, the engine;
- `scan` (repair_threads, dry run) and `repair`;
- peak Python memory of `scan` on a store of N/10 threads and of N threads.

Then a store of N delta-channel threads (`messages` a `DeltaChannel` as in deep
agents, 40 messages written by a real graph in 10 updates, a snapshot every 5, 2%
broken): `scan` against the raw read of the same rows (the heads, then each page's
delta walk: seeds and writes), against loading every thread the way LangGraph does
(`get_state` with the raw saver) and checking it with the engine, and the scan's
peak memory at N/5 and N.

Every figure printed is a ratio of two times taken in the same run, or a memory
growth; the definitions are printed with them. The floor ratios are medians of
five rounds of the scan and both raw reads run back to back, as one timing of
each moves by a tenth or more on a busy machine.

    python benchmarks/bench_batch.py [--threads 20000] [--delta-threads 20000]
                                     [--only plain|delta] [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any
from urllib.parse import quote

import ormsgpack
import psycopg
from bench_engine import make_history
from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer
from psycopg.rows import dict_row
from typing_extensions import TypedDict

from langgraph_checkpoint_repair import repair_messages
from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.decoding.strict import StrictSerializer
from langgraph_checkpoint_repair.stores.base import Selection
from langgraph_checkpoint_repair.stores.first_look import page
from langgraph_checkpoint_repair.stores.postgres import base as scan_sql
from langgraph_checkpoint_repair.targets import open_saver

MESSAGES = 40
BROKEN_EVERY = 50  # 2%
SCAN_WORKERS = 4  # the command's default --concurrency
Decode = Callable[[str, bytes], Any]


@contextlib.contextmanager
def schema(uri: str) -> Iterator[str]:
    """A fresh schema, dropped afterwards; yields a URI scoped to it."""
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    try:
        yield f"{uri}{'&' if '?' in uri else '?'}options={quote(f'-c search_path={name}')}"
    finally:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


def template_rows(saver: PostgresSaver, thread_id: str, broken: bool) -> dict[str, list[Any]]:
    """Write one thread of three checkpoints with the saver's own put; read its rows back."""
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    old = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    version = None
    for step, size in enumerate((MESSAGES - 4, MESSAGES - 2, MESSAGES)):
        checkpoint = empty_checkpoint()
        checkpoint["id"], checkpoint["ts"] = str(uuid6(clock_seq=step)), old
        history = make_history(size, 7 if broken and size == MESSAGES else None)
        version = saver.get_next_version(version, None)
        checkpoint["channel_values"] = {"messages": history}
        checkpoint["channel_versions"] = {"messages": version}
        metadata: Any = {"source": "loop", "step": step}
        config = saver.put(config, checkpoint, metadata, {"messages": version})
    with saver.conn.cursor() as cursor:  # type: ignore[union-attr]
        return {
            table: list(cursor.execute(f"SELECT * FROM {table} WHERE thread_id = %s", (thread_id,)))
            for table in ("checkpoints", "checkpoint_blobs")
        }


def seed(uri: str, threads: int) -> None:
    """`threads` copies of the two template threads, bulk-loaded with COPY."""
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        templates = {b: template_rows(saver, f"template-{b}", b) for b in (False, True)}
        conn.execute("DELETE FROM checkpoints; DELETE FROM checkpoint_blobs", prepare=False)
        with conn.cursor() as cursor:
            for table in ("checkpoints", "checkpoint_blobs"):
                columns = list(templates[False][table][0])
                copy_sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
                with cursor.copy(copy_sql) as copy:
                    for n in range(threads):
                        for row in templates[n % BROKEN_EVERY == 0][table]:
                            copy.write_row(_row(row, columns, f"thread-{n:07}"))
        conn.execute("ANALYZE")


def _row(row: dict[str, Any], columns: list[str], thread_id: str) -> list[Any]:
    values = {**row, "thread_id": thread_id}
    return [json.dumps(v) if isinstance(v, dict) else values[c] for c, v in values.items()]


def raw_read(uri: str, decode: Decode, binary: bool = False) -> int:
    """Fetch the rows the scan reads (its head pages with their other values and pending
    writes, each page's delta walks) and decode every blob with `decode`; returns the
    number of heads. The rows come as
    psycopg gives them by default (text results, bytea hex-encoded), or with
    `binary` as the scan itself asks for them."""
    heads, after, selection = 0, None, Selection()
    with psycopg.connect(uri) as conn, conn.cursor(binary=binary) as cursor:
        while found := cursor.execute(*scan_sql.heads_query(selection, after)).fetchall():
            rows, others = scan_sql.split_rows(found)
            heads += len({(row[0], row[1]) for row in rows})
            blobs = [(row[3], row[4]) for row in [*rows, *others]]
            for channel, keys in page.walks_needed(rows).items():
                walked = cursor.execute(*scan_sql.delta_walk_query(channel, keys)).fetchall()
                blobs += [(row[8], row[9]) for row in walked]
            for type_, blob in blobs:
                if blob is not None and type_ not in ("empty", "null"):
                    decode(type_, bytes(blob))
            after = (rows[-1][0], rows[-1][1])
    return heads


def serde_decode(serde: Any) -> Decode:
    """Decode as the saver does: every message built."""
    return lambda type_, blob: serde.loads_typed((type_, blob))


def plain_decode(type_: str, blob: bytes) -> Any:
    """Decode into plain structures: no message is built."""
    return ormsgpack.unpackb(blob, ext_hook=_plain, option=ormsgpack.OPT_NON_STR_KEYS)


def _plain(code: int, data: bytes) -> Any:
    return ormsgpack.unpackb(data, ext_hook=_plain, option=ormsgpack.OPT_NON_STR_KEYS)


def naive_walk(saver: PostgresSaver) -> int:
    """What a script over the public API does: list everything, load each head."""
    heads: dict[tuple[str, str], str] = {}
    for tup in saver.list(None):
        c = tup.config["configurable"]
        key = (c["thread_id"], c["checkpoint_ns"])
        heads[key] = max(heads.get(key, ""), c["checkpoint_id"])
    broken = 0
    for (thread_id, ns), checkpoint_id in heads.items():
        config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                        "checkpoint_id": checkpoint_id}}  # fmt: skip
        head = saver.get_tuple(config)
        assert head is not None
        broken += repair_messages(head.checkpoint["channel_values"]["messages"]).changed
    return broken


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


FLOOR_ROUNDS = 5


def floor_ratios(uri: str, scan_once: Callable[[], Any]) -> tuple[float, float]:
    """The scan against the text and the binary floor: each the median, over
    `FLOOR_ROUNDS` rounds of the three run back to back (their order rotating, so
    none is always first), of the round's scan time / floor time."""
    works: list[Callable[[], Any]] = [
        scan_once,
        lambda: raw_read(uri, plain_decode),
        lambda: raw_read(uri, plain_decode, binary=True),
    ]
    rounds = rotated_rounds(works, FLOOR_ROUNDS)
    text_ratios = [seconds[0] / seconds[1] for seconds in rounds]
    binary_ratios = [seconds[0] / seconds[2] for seconds in rounds]
    return statistics.median(text_ratios), statistics.median(binary_ratios)


def rotated_rounds(works: list[Callable[[], Any]], rounds: int) -> list[list[float]]:
    """The seconds of each of `works` per round, run back to back, their order rotating
    from round to round so that none is always first."""
    measured = []
    for turn in range(rounds):
        seconds = [0.0] * len(works)
        for n in range(len(works)):
            which = (turn + n) % len(works)
            seconds[which], _ = timed(works[which])
        measured.append(seconds)
    return measured


def scan(saver: PostgresSaver, **settings: Any) -> Any:
    """`langgraph-repair scan`: a dry run that looks at every head now."""
    return repair_threads(
        saver, dry_run=True, min_idle=timedelta(0), concurrency=SCAN_WORKERS, **settings
    )


def scan_saver(uri: str) -> Any:
    """The saver `langgraph-repair scan` opens for a postgresql:// target: the strict
    serializer, a pool of one connection per worker and one more, read-only sessions."""
    return open_saver(
        uri, pool_size=SCAN_WORKERS + 1, gentle=True, read_only=True, serde=StrictSerializer()
    )


def repair_saver(uri: str) -> Any:
    """The saver `langgraph-repair repair` opens: the same, with sessions that may write."""
    return open_saver(uri, pool_size=SCAN_WORKERS + 1, gentle=True, serde=StrictSerializer())


def peak_scan_memory(uri: str, **settings: Any) -> int:
    with scan_saver(uri) as saver:
        tracemalloc.start()
        scan(saver, **settings)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def print_ratios(rows: list[tuple[str, float]], base: float, base_name: str) -> None:
    print(f"{'':<44}{'vs ' + base_name:>18}")
    for label, seconds in rows:
        print(f"{label:<44}{seconds / base:>17.2f}x")


def print_memory(kind: str, small: int, small_peak: int, big: int, big_peak: int) -> None:
    print(
        f"{kind} scan peak memory growth, {big:,} threads against {small:,}: "
        f"{big_peak / small_peak:.2f}x ({small_peak / 2**20:.1f} -> {big_peak / 2**20:.1f} MiB; "
        f"{big / small:.0f}x the threads; 1.00x is flat)"
    )


SCAN_RATIO = """scan ratio = time(`scan`, strict serializer) / time(fetch the same rows with the
scan's own queries and decode every blob with the saver's serde), same run"""
PLAIN_RATIO = f"""floor ratio = time(`scan`) / time(fetch the same rows, decode every blob with
plain ormsgpack, no message built), the median over {FLOOR_ROUNDS} rounds of the scan and
both floors back to back (their order rotating); the rows fetched as text (psycopg's
default), and, for the binary floor ratio, in binary as the scan fetches them (the
least any scan must do)"""


class DeltaState(TypedDict):
    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=5)
    ]


def delta_graph(saver: PostgresSaver) -> Any:
    builder = StateGraph(DeltaState)
    builder.add_node("chat", lambda state: {})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def thread_config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def seed_delta(uri: str, threads: int) -> list[str]:
    """`threads` delta threads: copies, in SQL, of a clean and a broken template thread
    that a real graph wrote in 10 updates. Returns the thread ids."""
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        graph = delta_graph(saver)
        for broken in (False, True):
            history = make_history(MESSAGES, 7 if broken else None)
            for start in range(0, MESSAGES, 4):
                update = {"messages": history[start : start + 4]}
                graph.update_state(thread_config(f"template-{broken}"), update, as_node="chat")
    ids = [f"thread-{n:07}" for n in range(threads)]
    with psycopg.connect(uri, autocommit=True) as conn:
        for table, columns in DELTA_TABLES.items():
            conn.execute(
                f"INSERT INTO {table} (thread_id, {columns}) "
                f"SELECT 'thread-' || lpad(n::text, 7, '0'), {columns} FROM {table}, "
                f"generate_series(0, %s - 1) AS n WHERE thread_id = "
                f"CASE WHEN n %% {BROKEN_EVERY} = 0 THEN 'template-True' ELSE 'template-False' END",
                (threads,),
            )
        for table in DELTA_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE thread_id LIKE 'template-%'")
        conn.execute("ANALYZE")
    return ids


WRITE_COLUMNS = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob"
DELTA_TABLES = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": WRITE_COLUMNS,
}


def langgraph_loads(saver: PostgresSaver, thread_ids: list[str]) -> int:
    """What reading each thread through LangGraph costs: `get_state`, then the engine."""
    graph = delta_graph(saver)
    return sum(
        repair_messages(graph.get_state(thread_config(t)).values["messages"]).changed
        for t in thread_ids
    )


def delta_main(uri: str, threads: int) -> None:
    with schema(uri) as small, schema(uri) as big:
        seed_delta(small, threads // 5)
        thread_ids = seed_delta(big, threads)
        with scan_saver(big) as saver:
            serde_seconds, heads = timed(lambda: raw_read(big, serde_decode(saver.serde)))
            scan_seconds, report = timed(lambda: scan(saver))
            text_floor, binary_floor = floor_ratios(big, lambda: scan(saver))
        with PostgresSaver.from_conn_string(big) as saver:
            load_seconds, broken = timed(lambda: langgraph_loads(saver, thread_ids))
        assert heads == report.threads_scanned == threads
        assert broken == report.threads_needing_repair == len(range(0, threads, BROKEN_EVERY))
        small_peak, big_peak = peak_scan_memory(small), peak_scan_memory(big)
    print(f"\ndelta store: {threads:,} heads, {broken:,} broken")
    print(SCAN_RATIO)
    print(f"delta scan ratio: {scan_seconds / serde_seconds:.2f}x")
    print(PLAIN_RATIO)
    print(f"delta floor ratio: {text_floor:.2f}x")
    print(f"delta binary floor ratio: {binary_floor:.2f}x")
    print_ratios([("LangGraph load per thread (get_state) + engine", load_seconds)],
                 scan_seconds, "scan")  # fmt: skip
    print_memory("delta", threads // 5, small_peak, threads, big_peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20_000)
    parser.add_argument("--delta-threads", type=int, default=20_000)
    parser.add_argument("--only", choices=["plain", "delta"])
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    if args.only != "delta":
        plain_main(args.postgres, args.threads)
    if args.only != "plain":
        delta_main(args.postgres, args.delta_threads)


def plain_main(uri: str, threads: int) -> None:
    with schema(uri) as small, schema(uri) as big:
        seed(small, threads // 10)
        seed(big, threads)
        with scan_saver(big) as saver:
            serde_seconds, heads = timed(lambda: raw_read(big, serde_decode(saver.serde)))
            scan_seconds, report = timed(lambda: scan(saver))
            text_floor, binary_floor = floor_ratios(big, lambda: scan(saver))
            naive_seconds, naive_broken = timed(lambda: naive_walk(saver))
        with repair_saver(big) as saver:
            repair_seconds, repaired = timed(lambda: repair_threads(saver, min_idle=timedelta(0)))
        assert heads == report.threads_scanned == threads
        assert naive_broken == report.threads_needing_repair == repaired.threads_repaired
        small_peak, big_peak = peak_scan_memory(small), peak_scan_memory(big)
    print(f"plain store: {heads:,} heads, {report.threads_needing_repair:,} broken")
    print(SCAN_RATIO)
    print(f"plain scan ratio: {scan_seconds / serde_seconds:.2f}x")
    print(PLAIN_RATIO)
    print(f"plain floor ratio: {text_floor:.2f}x")
    print(f"plain binary floor ratio: {binary_floor:.2f}x")
    print_ratios([("repair", repair_seconds), ("naive walk (list, get_tuple each, engine)",
                  naive_seconds)], scan_seconds, "scan")  # fmt: skip
    print_memory("plain", threads // 10, small_peak, threads, big_peak)


if __name__ == "__main__":
    main()
