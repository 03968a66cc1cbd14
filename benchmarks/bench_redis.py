"""`scan` of a Redis store against loading every thread's head through RedisSaver.

Starts a Redis server of its own (valkey with RedisJSON and RediSearch, as the tests
do), writes one chat thread through a real graph on RedisSaver, and copies its keys
to THREADS threads (documents as the saver wrote them, only the thread id changed).
Then, alternating, ROUNDS times each:

- the reference: `RedisSaver.get_tuple` of every thread's head, the thread ids given;
- ours: `repair_threads(dry_run=True)` over the `redis://` TARGET's saver, which
  finds the heads itself and judges each.

It prints the medians and their ratio (ours / the reference; lower is faster), the
server's own counters for one run of each (commands, keys read), and the peak Python
memory of `scan` at THREADS and at MEMORY_THREADS threads (flat is 1.00x).

    python benchmarks/bench_redis.py [--threads 10000] [--memory-threads 100000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.redis import RedisSaver
from tests.support.agents import chat_graph
from tests.support.redis_server import redis_server

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.stores.redis.opening import redis_saver

ROUNDS = 3
TEMPLATE = "template-thread"


def template_keys(url: str) -> list[bytes]:
    """One thread of three chat turns, written through a real graph on RedisSaver."""
    with RedisSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = chat_graph(saver)
        for turn in range(3):
            graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, thread(TEMPLATE))
        return sorted(key for key in saver._redis.scan_iter(count=1000) if TEMPLATE.encode() in key)


def thread(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def copy_threads(url: str, keys: list[bytes], first: int, last: int) -> None:
    """Threads `first`..`last`-1: every key of the template, its thread id replaced."""
    with redis.Redis.from_url(url) as client:
        kinds = {key: client.type(key).decode() for key in keys}
        values = {key: _read(client, key, kinds[key]) for key in keys}
        for start in range(first, last, 500):
            with client.pipeline(transaction=False) as pipe:
                for n in range(start, min(start + 500, last)):
                    for key in keys:
                        _write(pipe, key, kinds[key], values[key], thread_name(n))
                pipe.execute()


def thread_name(n: int) -> str:
    return f"t-{n:07}"


def _read(client: Any, key: bytes, kind: str) -> Any:
    if kind == "ReJSON-RL":
        return json.dumps(client.json().get(key))
    if kind == "zset":
        return client.zrange(key, 0, -1, withscores=True)
    return client.get(key)


def _write(pipe: Any, key: bytes, kind: str, value: Any, name: str) -> None:
    new_key = key.decode().replace(TEMPLATE, name)
    if kind == "ReJSON-RL":
        pipe.json().set(new_key, "$", json.loads(value.replace(TEMPLATE, name)))
    elif kind == "zset":
        pipe.zadd(new_key, {m.decode().replace(TEMPLATE, name): s for m, s in value})
    else:
        pipe.set(new_key, value.decode().replace(TEMPLATE, name))


def load_every_head(url: str, threads: int) -> None:
    with RedisSaver.from_conn_string(url) as saver:
        saver.setup()
        for n in range(threads):
            assert saver.get_tuple(thread(thread_name(n))) is not None


def our_scan(url: str, threads: int) -> None:
    with redis_saver(url) as saver:
        report = repair_threads(saver, dry_run=True, min_idle=timedelta(0))
    assert report.threads_scanned == threads + 1, report.threads_scanned


def counters(url: str) -> tuple[int, int]:
    """The server's commands run and keys looked up, so far."""
    with redis.Redis.from_url(url) as client:
        stats = client.info("stats")
        calls = sum(int(c["calls"]) for c in client.info("commandstats").values())
    return calls, int(stats["keyspace_hits"]) + int(stats["keyspace_misses"])


def timed(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def peak_memory(url: str, threads: int) -> int:
    tracemalloc.start()
    our_scan(url, threads)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def measured(url: str, threads: int) -> Iterator[str]:
    runs: dict[str, Callable[[], None]] = {
        "ours": lambda: our_scan(url, threads),
        "reference": lambda: load_every_head(url, threads),
    }
    times: dict[str, list[float]] = {"ours": [], "reference": []}
    for n in range(ROUNDS):
        for name in sorted(runs, reverse=bool(n % 2)):
            times[name].append(timed(runs[name]))
    mine, theirs = statistics.median(times["ours"]), statistics.median(times["reference"])
    yield (
        f"{threads:,} threads, medians of {ROUNDS}: scan {mine:.2f} s, get_tuple of every "
        f"head {theirs:.2f} s: {mine / theirs:.3f}x"
    )
    for name, run in runs.items():
        calls, keys = counters(url)
        run()
        after_calls, after_keys = counters(url)
        yield f"{name}: {after_calls - calls:,} commands, {after_keys - keys:,} keys read"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--memory-threads", type=int, default=100_000)
    args = parser.parse_args()
    small, big = args.threads, args.memory_threads
    with redis_server() as url:
        keys = template_keys(url)
        copy_threads(url, keys, 0, small)
        for line in measured(url, small):
            print(line, flush=True)
        small_peak = peak_memory(url, small)
        copy_threads(url, keys, small, big)
        big_peak = peak_memory(url, big)
    print(
        f"scan peak memory, {big:,} threads against {small:,}: {big_peak / small_peak:.2f}x "
        f"({small_peak / 2**20:.1f} -> {big_peak / 2**20:.1f} MiB; 1.00x is flat)"
    )


if __name__ == "__main__":
    main()
