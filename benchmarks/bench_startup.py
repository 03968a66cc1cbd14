"""What an operator waits for before `langgraph-repair` does anything.

Each round runs these commands once each, in a new process, their order rotating:

- `python -c pass`: the bare interpreter;
- `python -c "import langgraph.checkpoint.sqlite"`: importing LangGraph's SQLite saver,
  the least a scan of a SQLite file must load;
- `langgraph-repair --version`, `langgraph-repair --help`;
- `langgraph-repair scan sqlite:///FILE --min-idle 0 --json` of a file of ten threads
  written by a real graph, three of them broken, and the same scan printing its table.

Every command runs once untimed first, and all run with Python's bytecode cache (an
installed wheel has its modules compiled; `PYTHONDONTWRITEBYTECODE` is dropped from the
children's environment so that a checkout has them too).

It prints the median wall time of each, and the ratios the command is held to:
`--version` and `--help` against the bare interpreter (goal: at most 10x), the scan
against importing the saver (goal: at most 1.5x).

    python benchmarks/bench_startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

COMMAND = str(Path(sys.executable).with_name("langgraph-repair"))
BROKEN = 3
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def seed(path: Path, threads: int = 10) -> None:
    """`threads` threads of a real graph; the first `BROKEN` end on an unanswered call."""
    builder = StateGraph(MessagesState)
    builder.add_node("chat", lambda state: {"messages": [AIMessage("Hello.")]})
    builder.add_edge(START, "chat")
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        for n in range(threads):
            config: RunnableConfig = {"configurable": {"thread_id": f"thread-{n}"}}
            graph.invoke({"messages": [HumanMessage("Hi")]}, config)
            call = {"name": "lookup", "args": {}, "id": f"call-{n}"}
            turn: list[AnyMessage] = [AIMessage("", tool_calls=[call])]
            if n >= BROKEN:
                turn.append(ToolMessage("found", tool_call_id=f"call-{n}"))
            graph.update_state(config, {"messages": turn}, as_node="chat")


def commands(store: Path) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import the SQLite saver": [sys.executable, "-c", "import langgraph.checkpoint.sqlite"],
        "--version": [COMMAND, "--version"],
        "--help": [COMMAND, "--help"],
        "scan of 10 threads": [COMMAND, "scan", f"sqlite:///{store}", "--min-idle", "0", "--json"],
        "the same, as a table": [COMMAND, "scan", f"sqlite:///{store}", "--min-idle", "0"],
    }


def wall_time(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):  # a scan that finds broken threads exits 1
        raise SystemExit(f"{command[1:]} failed ({done.returncode}): {done.stderr}")
    return seconds


def check_scan(command: list[str]) -> None:
    """The scan timed is a real one: it finds the broken threads."""
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    if summary["threads_needing_repair"] != BROKEN:
        raise SystemExit(f"the scan found {summary['threads_needing_repair']}, not {BROKEN}")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=15)
    rounds = options.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "threads.sqlite"
        seed(store)
        timed = commands(store)
        check_scan(timed["scan of 10 threads"])
        for command in timed.values():
            wall_time(command)  # untimed: the bytecode cache filled
        times: dict[str, list[float]] = {name: [] for name in timed}
        names = list(timed)
        for turn in range(rounds):
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                times[name].append(wall_time(timed[name]))
    median = {name: statistics.median(each) for name, each in times.items()}
    for name, seconds in median.items():
        print(f"{name:26s} {seconds:.3f} s (median of {rounds})")
    bare, saver = median["python -c pass"], median["import the SQLite saver"]
    print(f"--version / bare interpreter:          {median['--version'] / bare:.1f}x (goal 10x)")
    print(f"--help / bare interpreter:             {median['--help'] / bare:.1f}x (goal 10x)")
    scan, table = median["scan of 10 threads"] / saver, median["the same, as a table"] / saver
    print(f"scan of 10 threads / import the saver: {scan:.2f}x (goal 1.5x)")
    print(f"the same, as a table / import the saver: {table:.2f}x (goal 1.5x)")


if __name__ == "__main__":
    main()
