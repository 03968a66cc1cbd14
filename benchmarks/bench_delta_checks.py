"""What the delta history checks cost `scan`: the seeds proven from their rows
(`delta_value_diverged`, `delta_seed_flattened`) and the messages found without an id
(`message_id_missing`), on the delta store `bench_batch` seeds (N threads, 40
messages written in 10 updates, a snapshot every 5, 2% broken).

The same scan runs with the checks and with them switched off in this process (the
reference: the proof never asked for, the first look taking every message as it did,
no id counted), round after round, their order rotating; the first look's helper
process is off in both, so that all of the look runs here, where the switch reaches.
Printed: the median of the per-round ratios, and each variant's rows read
(pg_stat_database's tup_returned and blks_hit+blks_read over its rounds).

With `--prove-history`, the variant is `scan --prove-history` (every seed of every
head proven from its namespace's rows) and the reference today's `scan`, checks on.

    python benchmarks/bench_delta_checks.py [--delta-threads 3000] [--rounds 5]
                                            [--prove-history] [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import psycopg
from bench_batch import scan, scan_saver, schema, seed_delta, timed

from langgraph_checkpoint_repair.decisions import plan
from langgraph_checkpoint_repair.stores import history
from langgraph_checkpoint_repair.stores.first_look import helper, plain


def _any_message(item: Any) -> bool:
    """The first look's message test before the id checks: any decoded message."""
    return type(item) is tuple


@contextlib.contextmanager
def checks_off() -> Iterator[None]:
    with (
        mock.patch.object(history, "to_prove", lambda *args: []),
        mock.patch.object(plan, "without_ids", lambda messages: 0),
        mock.patch.object(plain, "_has_an_id", _any_message),
    ):
        yield


def database_work(uri: str) -> tuple[int, int]:
    """pg_stat_database's rows returned and blocks touched for the store's database
    (after the second the server may take to flush the backends' counts)."""
    time.sleep(1.5)
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT tup_returned, blks_hit + blks_read FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def measured(
    uri: str, saver: Any, off: bool, prove_history: bool
) -> tuple[float, tuple[int, int], Any]:
    """One scan: the reference (`off`) or the variant, as `prove_history` sets them."""
    before = database_work(uri)
    switched_off = off and not prove_history
    with checks_off() if switched_off else contextlib.nullcontext():
        seconds, report = timed(lambda: scan(saver, prove_history=prove_history and not off))
    after = database_work(uri)
    return seconds, (after[0] - before[0], after[1] - before[1]), report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delta-threads", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--prove-history", action="store_true")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    ratios: list[float] = []
    work: dict[bool, list[tuple[int, int]]] = {True: [], False: []}
    with schema(args.postgres) as uri, mock.patch.object(helper, "_start", lambda: None):
        seed_delta(uri, args.delta_threads)
        with scan_saver(uri) as saver:
            scan(saver)  # warm the cache and the pool
            for turn in range(args.rounds):
                seconds: dict[bool, float] = {}
                for off in (turn % 2 == 0, turn % 2 == 1):
                    seconds[off], used, report = measured(uri, saver, off, args.prove_history)
                    work[off].append(used)
                    assert report.threads_scanned == args.delta_threads
                ratios.append(seconds[False] / seconds[True])
    print(f"delta store: {args.delta_threads:,} heads")
    names = ("scan --prove-history", "scan"), ("with the checks", "without them")
    variant, reference = names[0] if args.prove_history else names[1]
    print(f"ratio = time({variant}) / time({reference})")
    print(f"ratio, median of {args.rounds} rounds: {statistics.median(ratios):.2f}x")
    print(f"per round: {', '.join(f'{r:.2f}x' for r in ratios)}")
    for off, name in ((False, variant), (True, reference)):
        rows = sum(u[0] for u in work[off]) // args.rounds
        blocks = sum(u[1] for u in work[off]) // args.rounds
        print(f"{name:<20} per scan: {rows:,} rows returned, {blocks:,} blocks touched")


if __name__ == "__main__":
    main()
