"""Load cost of `PatchingCheckpointer` against the raw saver's.

Seeds threads of 10, 100 and 1000 messages (clean, and with one dangling call)
in a SQLite file and in PostgreSQL, then times `get_tuple` through the wrapper
and through the raw saver, interleaved in one run, and prints the median of the
pairs' wrapped/raw ratios.

Then the 1000-message clean threads through a wrapper with a token budget
(`max_input_tokens=200000`, which they fit in), against the raw saver.

Then a delta-channel thread of 1000 messages (`messages` a `DeltaChannel`, as in
deep agents, snapshotted every 50 updates, the head 40 updates past its last
snapshot), clean and with one dangling call: a load there is what LangGraph does
to read a state (`graph.get_state`: the head, then the ancestors' writes replayed),
so that is what is timed, wrapped against raw, the same way.

    python benchmarks/bench_load.py [--postgres postgresql://...] [--rounds 200] [--only budget]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Annotated, Any

from bench_batch import schema
from bench_engine import make_history
from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer
from typing_extensions import TypedDict

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy

SIZES = (10, 100, 1000)
WINDOW = RepairPolicy(max_input_tokens=200_000)
"""A token budget the 1000-message threads fit in, as most threads do."""


def seed(saver: BaseCheckpointSaver[Any], size: int, broken: bool) -> Any:
    """One thread whose head holds `size` messages; `broken` drops one tool result."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": make_history(size, 3 if broken else None)}
    version = saver.get_next_version(None, None)
    checkpoint["channel_versions"] = {"messages": version}
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex, "checkpoint_ns": ""}}
    return saver.put(config, checkpoint, {"source": "input", "step": 0}, {"messages": version})


def seconds(load: Callable[[], Any]) -> float:
    start = time.perf_counter()
    load()
    return time.perf_counter() - start


def median_ratio(raw: Callable[[], Any], wrapped: Callable[[], Any], rounds: int) -> float:
    """The median over `rounds` interleaved pairs of wrapped time / raw time, which of the
    two goes first alternating: both see the same machine load, pair by pair."""
    ratios: list[float] = []
    for n in range(rounds):
        if n % 2:
            raw_time, wrapped_time = seconds(raw), seconds(wrapped)
        else:
            wrapped_time, raw_time = seconds(wrapped), seconds(raw)
        ratios.append(wrapped_time / raw_time)
    return statistics.median(ratios)


def compare(
    saver: BaseCheckpointSaver[Any], config: Any, rounds: int, policy: RepairPolicy | None = None
) -> float:
    """`get_tuple` through the wrapper against the raw saver's (`median_ratio`)."""
    wrapped = PatchingCheckpointer(saver, policy=policy)
    load_raw = functools.partial(saver.get_tuple, config)
    load_wrapped = functools.partial(wrapped.get_tuple, config)
    return median_ratio(load_raw, load_wrapped, rounds)


@contextmanager
def sqlite_saver() -> Iterator[BaseCheckpointSaver[Any]]:
    with (
        tempfile.TemporaryDirectory() as folder,
        SqliteSaver.from_conn_string(str(Path(folder) / "bench.sqlite")) as saver,
    ):
        yield saver


@contextmanager
def postgres_saver(uri: str) -> Iterator[BaseCheckpointSaver[Any]]:
    with schema(uri) as scoped, PostgresSaver.from_conn_string(scoped) as saver:
        saver.setup()
        yield saver


class DeltaState(TypedDict):
    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=50)
    ]


def delta_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    builder = StateGraph(DeltaState)
    builder.add_node("chat", lambda state: {})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def seed_delta(saver: BaseCheckpointSaver[Any], broken: bool) -> Any:
    """A delta thread of 1000 messages written in 90 updates of about 11 each."""
    history = make_history(990, 3 if broken else None)
    graph, config = delta_graph(saver), {"configurable": {"thread_id": uuid.uuid4().hex}}
    for start in range(0, len(history), 11):
        graph.update_state(config, {"messages": history[start : start + 11]}, as_node="chat")
    return config


def compare_delta(saver: BaseCheckpointSaver[Any], config: Any, rounds: int) -> float:
    """`get_state` through the wrapper against the raw saver's (`median_ratio`)."""
    raw, wrapped = delta_graph(saver), delta_graph(PatchingCheckpointer(saver))
    load_raw = functools.partial(raw.get_state, config)
    load_wrapped = functools.partial(wrapped.get_state, config)
    return median_ratio(load_raw, load_wrapped, rounds)


DEFINITION = """ratio = median over {rounds} interleaved pairs (raw, wrapped, raw, wrapped, ..., the
order alternating) of time(load through PatchingCheckpointer) / time(load with the raw
saver), in one process; 1.000 means no overhead. Plain threads load with `get_tuple`,
delta threads with `graph.get_state` (the head, then the ancestors' writes replayed)."""


def print_budget_row(stores: dict[str, Callable[[], Any]], rounds: int) -> None:
    """The clean 1000-message threads through a wrapper with a budget they fit in."""
    print(f"\n{'budget':<10}{'messages':>10}{'clean wrapped/raw':>20}")
    for name, open_saver in stores.items():
        with open_saver() as saver:
            clean = compare(saver, seed(saver, 1000, broken=False), rounds, WINDOW)
            print(f"{name:<10}{1000:>10}{clean:>20.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--only", choices=["budget"], help="the budget row alone")
    args = parser.parse_args()
    stores: dict[str, Callable[[], AbstractContextManager[BaseCheckpointSaver[Any]]]] = {
        "sqlite": sqlite_saver,
        "postgres": functools.partial(postgres_saver, args.postgres),
    }
    print(DEFINITION.format(rounds=args.rounds))
    if args.only == "budget":
        print_budget_row(stores, args.rounds)
        return
    print(f"\n{'store':<10}{'messages':>10}{'clean wrapped/raw':>20}{'broken wrapped/raw':>20}")
    for name, open_saver in stores.items():
        with open_saver() as saver:
            for size in SIZES:
                clean = compare(saver, seed(saver, size, broken=False), args.rounds)
                broken = compare(saver, seed(saver, size, broken=True), args.rounds)
                print(f"{name:<10}{size:>10}{clean:>20.3f}{broken:>20.3f}")
    print_budget_row(stores, args.rounds)
    print(f"\n{'delta':<10}{'messages':>10}{'clean wrapped/raw':>20}{'broken wrapped/raw':>20}")
    for name, open_saver in stores.items():
        with open_saver() as saver:
            clean = compare_delta(saver, seed_delta(saver, broken=False), args.rounds)
            broken = compare_delta(saver, seed_delta(saver, broken=True), args.rounds)
            print(f"{name:<10}{990:>10}{clean:>20.3f}{broken:>20.3f}")


if __name__ == "__main__":
    main()
