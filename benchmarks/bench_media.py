"""What the content rules cost: on a clean history without media, and on a store of
threads that each hold a 1 MB image.

Figures are ratios measured in the same run:

- engine: `repair_messages` on a clean 100,000-message history (no media) with
  the content rules on, against the same call without them (1.0 = unchanged):
  a model profile and `max_result_chars`; and `provider="anthropic"` (hygiene and
  media limits) against `provider="anthropic", media="keep"` (hygiene only).
  Rounds alternate between the two, the best CPU time of each is kept, the
  garbage collector off while timing.
- scan: `scan --policy provider=anthropic` (full heads loaded, every image
  judged) of N PostgreSQL threads (default 1,000) holding a 1 MB PNG (1.4 MB as
  base64) in a tool result, against fetching the rows the scan reads and
  decoding every blob with ormsgpack into plain structures (the raw bound);
  and the scan without a provider, for comparison. The scan opens the store as
  the command does (strict serializer, a pool, read-only sessions).

    python benchmarks/bench_media.py [--threads 1000] [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
from bench_batch import SCAN_WORKERS, _row, plain_decode, raw_read, scan_saver, schema, timed
from bench_engine import make_history
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.batch import repair_threads

ROUNDS = 7
PROFILE_AND_CAP = RepairPolicy(model_profile={"image_inputs": False}, max_result_chars=200_000)
ANTHROPIC = RepairPolicy(provider="anthropic")
HYGIENE_ONLY = RepairPolicy(provider="anthropic", media="keep")


def cpu_time(work: Callable[[], Any]) -> float:
    gc.disable()
    try:
        start = time.process_time()
        work()
        return time.process_time() - start
    finally:
        gc.enable()


def engine_ratio(history: list[BaseMessage], on: RepairPolicy, off: RepairPolicy) -> float:
    """best(time with `on`) / best(time with `off`), rounds interleaved."""
    with_rules, without = [], []
    for _ in range(ROUNDS):
        without.append(cpu_time(lambda: repair_messages(history, policy=off)))
        with_rules.append(cpu_time(lambda: repair_messages(history, policy=on)))
    return min(with_rules) / min(without)


def image_thread() -> list[BaseMessage]:
    """A finished exchange whose tool result holds a 1 MB PNG (noise, so uncompressed)."""
    import base64
    import io
    import os

    from PIL import Image

    image = Image.frombytes("RGB", (600, 580), os.urandom(600 * 580 * 3))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    data = base64.b64encode(buffer.getvalue()).decode()
    block = {"type": "image", "base64": data, "mime_type": "image/png"}
    call = {"name": "screenshot", "args": {}, "id": "toolu_screenshot"}
    return [
        *make_history(36),
        HumanMessage("What is on screen?"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(content=[block], tool_call_id="toolu_screenshot", name="screenshot"),
        AIMessage("A login page."),
    ]


def seed(uri: str, threads: int) -> None:
    """`threads` copies of one image thread, bulk-loaded with COPY."""
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        config: Any = {"configurable": {"thread_id": "template", "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        old = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
        checkpoint["id"], checkpoint["ts"] = str(uuid6(clock_seq=1)), old
        version = saver.get_next_version(None, None)
        checkpoint["channel_values"] = {"messages": image_thread()}
        checkpoint["channel_versions"] = {"messages": version}
        saver.put(config, checkpoint, {"source": "loop", "step": 1}, {"messages": version})
        tables = ("checkpoints", "checkpoint_blobs")
        rows = {t: list(conn.execute(f"SELECT * FROM {t}")) for t in tables}
        conn.execute("DELETE FROM checkpoints; DELETE FROM checkpoint_blobs", prepare=False)
        with conn.cursor() as cursor:
            for table in tables:
                columns = list(rows[table][0])
                copy_sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
                with cursor.copy(copy_sql) as copy:
                    for n in range(threads):
                        for row in rows[table]:
                            copy.write_row(_row(row, columns, f"thread-{n:07}"))
        conn.execute("ANALYZE")


def scan(uri: str, policy: RepairPolicy) -> int:
    """`langgraph-repair scan --policy ...` as the command opens the store."""
    with scan_saver(uri) as saver:
        report = repair_threads(
            saver, dry_run=True, min_idle=timedelta(0), policy=policy, concurrency=SCAN_WORKERS
        )
    return report.threads_scanned


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()

    history = make_history(100_000)
    print("engine on a clean 100,000-message history, no media (1.0 = unchanged)")
    print(f"  profile + max_result_chars / no content rules: "
          f"{engine_ratio(history, PROFILE_AND_CAP, RepairPolicy()):.3f}")  # fmt: skip
    print(f"  anthropic / anthropic with media=keep:          "
          f"{engine_ratio(history, ANTHROPIC, HYGIENE_ONLY):.3f}")  # fmt: skip

    with schema(args.postgres) as uri:
        seeded, _ = timed(lambda: seed(uri, args.threads))
        raw, decoded = timed(lambda: raw_read(uri, plain_decode))
        judged, scanned = timed(lambda: scan(uri, ANTHROPIC))
        plain, _ = timed(lambda: scan(uri, RepairPolicy()))
    assert decoded == scanned == args.threads, (decoded, scanned)
    print(f"\nscan of {args.threads:,} PostgreSQL threads holding a 1 MB image "
          f"(seeded in {seeded:.1f} s)")  # fmt: skip
    print(f"  scan --policy provider=anthropic / raw decode: {judged / raw:.2f}  "
          f"({judged:.1f} s, {args.threads / judged:,.0f} threads/s)")  # fmt: skip
    print(f"  scan without a provider / raw decode:          {plain / raw:.2f}  ({plain:.1f} s)")


if __name__ == "__main__":
    main()
