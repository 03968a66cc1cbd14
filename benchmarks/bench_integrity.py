"""What the integrity findings cost a scan, and what `types` costs per thread.

Seeds the store of `bench_scale.py` (default 200,000 threads of 12 messages, 1%
broken) in a database of its own, then runs five rounds, each of three commands
one after another, as an operator runs them (a process each, `--json`; the two
scans swap places every other round):

- `scan` as it is now (the integrity findings included);
- `scan` of the release before the findings (`--before`, a git revision; its
  source is checked out in a temporary worktree and put first on PYTHONPATH);
- `types` (every type the heads name).

Per round it prints the wall time ratios `scan now / scan before` (goal: at most
1.1x) and `types / scan now` per thread (the same threads: goal at most 1.25x),
and the database's own reads (pg_stat_database tuples and buffers) of each
command; then the medians.

    python benchmarks/bench_integrity.py [--threads 200000] [--before REV]
                                         [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench_scale import DATABASE, Reads, bench_database, database_reads, seed

REPO = Path(__file__).resolve().parents[1]
BEFORE = "087f64f"
"""The last revision whose scan had no integrity findings."""
CLI = [sys.executable, "-m", "langgraph_checkpoint_repair.cli"]


@contextlib.contextmanager
def source_at(revision: str) -> Iterator[Path]:
    """The package's source as of `revision`, in a temporary git worktree."""
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree),
                        revision], check=True, capture_output=True)  # fmt: skip
        try:
            yield tree / "src"
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                           check=True, capture_output=True)  # fmt: skip


def timed_command(argv: list[str], source: Path | None = None) -> tuple[float, dict[str, object]]:
    """Wall time of one command, process start to exit, and its JSON line."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[2:4])} failed: {done.stderr.strip()}")
    return seconds, json.loads(done.stdout.strip().splitlines()[-1])


def measured(
    server: str, argv: list[str], source: Path | None = None
) -> tuple[float, Reads, dict[str, object]]:
    before = database_reads(server)
    seconds, summary = timed_command(argv, source)
    return seconds, database_reads(server) - before, summary


def which_source(source: Path) -> str:
    """Where the package a command with `source` first on its path comes from."""
    probe = "import langgraph_checkpoint_repair as p; print(p.__file__)"
    env = {**os.environ, "PYTHONPATH": str(source)}
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, check=True).stdout.strip()  # fmt: skip


def ratios(reads: Reads, reference: Reads) -> str:
    return (
        f"tuples {reads.tuples / reference.tuples:.3f}x, "
        f"buffers {reads.buffers / reference.buffers:.3f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    server = args.postgres
    with bench_database(server) as database, source_at(args.before) as old:
        assert which_source(old).startswith(str(old)), "the old source is not the one imported"
        uri, seconds = seed(database, "big", args.threads)
        print(f"seeded {args.threads:,} threads in {seconds:.0f} s; before = {args.before}")
        scan = [*CLI, "scan", uri, "--min-idle", "0", "--json"]
        types = [*CLI, "types", uri, "--json"]
        rows: list[tuple[float, float]] = []
        for n in range(args.rounds):
            if n % 2:  # the order alternates, so neither command always runs on a warmer cache
                old_s, old_reads, old_summary = measured(server, scan, old)
                now_s, now_reads, now = measured(server, scan)
            else:
                now_s, now_reads, now = measured(server, scan)
                old_s, old_reads, old_summary = measured(server, scan, old)
            types_s, types_reads, listed = measured(server, types)
            assert now["threads_scanned"] == old_summary["threads_scanned"] == args.threads
            assert now["threads_needing_repair"] == old_summary["threads_needing_repair"]
            rows.append((now_s / old_s, types_s / now_s))
            print(f"round {n + 1}: scan now / before {now_s / old_s:.3f}x "
                  f"({now_s:.1f} s / {old_s:.1f} s; {ratios(now_reads, old_reads)}); "
                  f"types / scan now {types_s / now_s:.3f}x "
                  f"({types_s:.1f} s; {ratios(types_reads, now_reads)}; "
                  f"{len(listed['types'])} types)", flush=True)  # type: ignore[arg-type]  # fmt: skip
    print(f"median of {len(rows)} rounds: scan now / before "
          f"{statistics.median(r[0] for r in rows):.3f}x, types / scan now "
          f"{statistics.median(r[1] for r in rows):.3f}x")  # fmt: skip
    print(f"(database {DATABASE}; wall times of whole commands, process start to exit)")


if __name__ == "__main__":
    main()
