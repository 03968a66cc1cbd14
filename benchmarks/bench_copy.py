"""A thread copy through the one line against the Agent Server's own fallback.

The server copies a thread (`POST /threads/ID/copy`) with its checkpointer's
`acopy_thread` where the class has one, else by reading every checkpoint and putting
it again through `aput` and `aput_writes`. This seeds one delta thread of TURNS chat
turns on SQLite and on PostgreSQL through the one line
(`langgraph_checkpoint_repair.server.checkpointer`), then copies it ROUNDS times each
way through langgraph-api's own adapter (its capabilities detected from the wrapper's
class, and with `acopy_thread` switched off for the fallback), alternating, and
prints the medians and their ratio (ours / the fallback; lower is faster).

    python benchmarks/bench_copy.py [--postgres URI] [--turns 100]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from langchain_core.messages import HumanMessage
from tests.support.one_line_sweep import chat, delta_state, served  # and langgraph-api's settings

ROUNDS = 5


async def timed_copies(target: str, turns: int) -> tuple[list[float], list[float]]:
    async with served(target) as (inner, caps, ours):
        fallback = type(ours)(inner, dataclasses.replace(caps, has_acopy_thread=False))
        graph = chat(ours, delta_state())
        for turn in range(turns):
            await graph.ainvoke({"messages": [HumanMessage(f"turn {turn}")]}, thread("source"))
        times: dict[str, list[float]] = {"ours": [], "fallback": []}
        for n in range(ROUNDS):
            for name, adapter in (("ours", ours), ("fallback", fallback))[:: 1 if n % 2 else -1]:
                start = time.perf_counter()
                await adapter.acopy_thread("source", f"{name}-{n}")
                times[name].append(time.perf_counter() - start)
        return times["ours"], times["fallback"]


def thread(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def report(name: str, ours: list[float], fallback: list[float], turns: int) -> None:
    mine, theirs = statistics.median(ours), statistics.median(fallback)
    print(
        f"{name}: a {turns}-turn delta thread ({3 * turns} checkpoints), medians of {ROUNDS}: "
        f"ours {mine * 1000:.1f} ms, the server's fallback {theirs * 1000:.1f} ms: "
        f"{mine / theirs:.3f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        target = f"sqlite:///{Path(folder) / 'threads.sqlite'}"
        report("SQLite", *asyncio.run(timed_copies(target, args.turns)), args.turns)
    schema = f"bench_copy_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.postgres, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        try:
            uri = f"{args.postgres}?options=-csearch_path%3D{schema}"
            report("PostgreSQL", *asyncio.run(timed_copies(uri, args.turns)), args.turns)
        finally:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
