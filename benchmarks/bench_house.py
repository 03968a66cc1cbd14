"""This release against another (`--reference SRC`, the `src` folder of a `git worktree`
of it): the engine, a load through the wrapper and a scan, each timed in processes of
its own, one with this release's code and one with the reference's, their order
rotating every round. A change that only moves code (a renovation) should leave each
ratio at 1.00x (goal: within 3%).

- engine: `repair_messages` on 100,000 messages (in turns of one to three calls),
  clean and with 1% of the calls unanswered, and on 10,000 clean messages under a
  token budget they fit in (the proof that they fit, `lean`); the best CPU time of
  five tries each, the garbage collector off;
- load: `PatchingCheckpointer.get_tuple` of a clean 1,000-message thread on SQLite
  and on PostgreSQL, without and with a token budget; the best of 50 tries;
- scan: `langgraph-repair scan --json` of a PostgreSQL store of N threads (default
  200,000, seeded as `bench_scale.py` seeds its store, 1% broken), wall time.

Each round gives this / reference for each work; the medians of five rounds are
printed, with each round's ratio.

`--instructions` counts instead of timing: the engine's three works (on 20,000
messages) run under valgrind's callgrind with a fixed hash seed, once and five
times, and the difference over four is one call's instructions. The count is the
same run after run, whatever else the machine is doing, so it tells a change in
the engine's code from a noisy neighbour (needs `valgrind`; no database).

    python benchmarks/bench_house.py --reference ../reference/src [--threads 200000]
        [--rounds 5] [--postgres postgresql://...]
    python benchmarks/bench_house.py --reference ../reference/src --instructions
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_batch import schema
from bench_load import seed as seed_thread
from bench_scale import COMMAND, bench_database
from bench_scale import seed as seed_store
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

HERE = Path(__file__).parent

ENGINE = """
import gc, json, sys, time
sys.path.insert(0, sys.argv[1])
from bench_engine import make_history
from langgraph_checkpoint_repair import RepairPolicy, repair_messages

def best(work):
    gc.collect(); gc.disable()
    try:
        times = []
        for _ in range(5):
            start = time.process_time(); work(); times.append(time.process_time() - start)
        return min(times)
    finally:
        gc.enable()

clean, broken = make_history(100_000), make_history(100_000, 100)
short, budget = make_history(10_000), RepairPolicy(max_input_tokens=10**9)
print(json.dumps({
    "engine, clean": best(lambda: repair_messages(clean)),
    "engine, 1% unanswered": best(lambda: repair_messages(broken)),
    "engine, within a budget": best(lambda: repair_messages(short, policy=budget)),
}))
"""

COUNTED = """
import gc, sys
sys.path.insert(0, sys.argv[1])
from bench_engine import make_history
from langgraph_checkpoint_repair import RepairPolicy, repair_messages

work, calls = sys.argv[2], int(sys.argv[3])
histories = {
    "engine, clean": (make_history(20_000), None),
    "engine, 1% unanswered": (make_history(20_000, 100), None),
    "engine, within a budget": (make_history(10_000), RepairPolicy(max_input_tokens=10**9)),
}
messages, policy = histories[work]
gc.disable()
for _ in range(calls):
    repair_messages(messages, policy=policy)
"""

LOAD = """
import json, sys, time
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy

sqlite_path, sqlite_config, postgres_uri, postgres_config = sys.argv[1:5]
budget = RepairPolicy(max_input_tokens=200_000)

def best(load, config):
    load(config)  # the first load warms the connection and the caches
    times = []
    for _ in range(50):
        start = time.perf_counter(); load(config); times.append(time.perf_counter() - start)
    return min(times)

found = {}
with SqliteSaver.from_conn_string(sqlite_path) as saver:
    config = json.loads(sqlite_config)
    found["load, SQLite"] = best(PatchingCheckpointer(saver).get_tuple, config)
    found["load, SQLite, budget"] = best(
        PatchingCheckpointer(saver, policy=budget).get_tuple, config
    )
with PostgresSaver.from_conn_string(postgres_uri) as saver:
    config = json.loads(postgres_config)
    found["load, PostgreSQL"] = best(PatchingCheckpointer(saver).get_tuple, config)
    found["load, PostgreSQL, budget"] = best(
        PatchingCheckpointer(saver, policy=budget).get_tuple, config
    )
print(json.dumps(found))
"""


def child_env(source: str | None) -> dict[str, str]:
    """The environment of a child running `source`'s code (None: this release's)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    return env


def timed_child(source: str | None, code: str, *args: str) -> dict[str, float]:
    """The times a child process reports (a JSON object on its last line)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=child_env(source),
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def scan_seconds(source: str | None, uri: str) -> dict[str, float]:
    """The wall time of one `scan --json` command over the whole store."""
    start = time.perf_counter()
    subprocess.run(
        [*COMMAND, uri, "--min-idle", "0", "--json"],
        env=child_env(source),
        capture_output=True,
        check=True,
    )
    return {"scan": time.perf_counter() - start}


def instructions(source: str | None, work: str, calls: int) -> int:
    """What callgrind counts for a child that makes `calls` calls of one engine work."""
    callgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={os.devnull}"]
    done = subprocess.run(
        [*callgrind, sys.executable, "-c", COUNTED, str(HERE), work, str(calls)],
        env={**child_env(source), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def print_instructions(reference: str) -> None:
    """One call's instructions for each engine work, this release / the reference."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt install valgrind)")
    for work in ["engine, clean", "engine, 1% unanswered", "engine, within a budget"]:
        each = {
            source: (instructions(source, work, 5) - instructions(source, work, 1)) / 4
            for source in (None, reference)
        }
        mine, theirs = each[None], each[reference]
        print(
            f"{work}, instructions per call, this / reference: {mine / theirs:.4f}x "
            f"({mine:,.0f} / {theirs:,.0f})"
        )


Work = Callable[[str | None], dict[str, float]]
"""A work timed with a release's code (its src folder; None: this release's)."""


def one_round(turn: int, reference: str, works: list[Work]) -> dict[str, float]:
    """This release / the reference for each work, which of them goes first rotating."""
    ratios: dict[str, float] = {}
    for run in works:
        mine: dict[str, float] = {}
        theirs: dict[str, float] = {}
        for source in [None, reference] if turn % 2 else [reference, None]:
            (mine if source is None else theirs).update(run(source))
        ratios.update({name: mine[name] / theirs[name] for name in mine})
    return ratios


def print_ratios(rounds: list[dict[str, float]]) -> None:
    for name in rounds[0]:
        each = [found[name] for found in rounds]
        listed = ", ".join(f"{ratio:.3f}" for ratio in each)
        print(f"{name}, this / reference: median {statistics.median(each):.3f}x ({listed})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="the src folder to compare with")
    parser.add_argument("--threads", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument(
        "--instructions", action="store_true", help="count the engine's instructions instead"
    )
    args = parser.parse_args()
    if args.instructions:
        print_instructions(args.reference)
        return
    with (
        tempfile.TemporaryDirectory() as folder,
        bench_database(args.postgres) as database,
        schema(args.postgres) as scoped,
    ):
        sqlite_path = str(Path(folder) / "load.sqlite")
        with SqliteSaver.from_conn_string(sqlite_path) as saver:
            sqlite_config = json.dumps(seed_thread(saver, 1000, broken=False))
        with PostgresSaver.from_conn_string(scoped) as saver:
            saver.setup()
            postgres_config = json.dumps(seed_thread(saver, 1000, broken=False))
        store, seconds = seed_store(database, "house", args.threads)
        print(f"seeded {args.threads:,} threads in {seconds:.0f} s")
        works: list[Work] = [
            lambda source: timed_child(source, ENGINE, str(HERE)),
            lambda source: timed_child(
                source, LOAD, sqlite_path, sqlite_config, scoped, postgres_config
            ),
            lambda source: scan_seconds(source, store),
        ]
        rounds = [one_round(turn, args.reference, works) for turn in range(args.rounds)]
    print_ratios(rounds)


if __name__ == "__main__":
    main()
