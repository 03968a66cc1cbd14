"""Growth on one AI message with very many calls: time(2n) / time(n) (2.0 means linear).

Each path a wide message goes through, on a history of a question, one AI message
with n calls and the results of every other call in reverse order (the order that
makes a list-based pairing check quadratic):

- the engine (`repair_messages`);
- the first look at a stored blob (decode without building messages, then check);
- a wrapped SQLite load (`PatchingCheckpointer.get_tuple`), and a scan of that store;
- `show`'s table (smaller n: Rich lays out about three rows a millisecond).

Best CPU time of several rounds, the garbage collector off while timing.

    python benchmarks/bench_wide_message.py
"""

from __future__ import annotations

import gc
import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from rich.console import Console

from langgraph_checkpoint_repair import PatchingCheckpointer, repair_messages
from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.batch.preview import ThreadPreview
from langgraph_checkpoint_repair.cli.show import print_preview
from langgraph_checkpoint_repair.stores.first_look.plain import decode_plain, plain_history_is_clean

SIZES = (15_000, 30_000)
SHOW_SIZES = (1_500, 3_000)
THREAD: RunnableConfig = {"configurable": {"thread_id": "wide", "checkpoint_ns": ""}}


def wide(calls: int) -> list[BaseMessage]:
    asked = [{"name": "lookup", "args": {"n": n}, "id": f"c{n}"} for n in range(calls)]
    answers = [
        ToolMessage(f"r{n}", tool_call_id=f"c{n}", id=f"r{n}") for n in reversed(range(0, calls, 2))
    ]
    return [HumanMessage("go", id="h"), AIMessage("", id="a", tool_calls=asked), *answers]


def best_seconds(work: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def first_look(calls: int) -> Callable[[], object]:
    _, blob = JsonPlusSerializer().dumps_typed(wide(calls))
    return lambda: plain_history_is_clean(decode_plain(blob))


def stored(calls: int, folder: Path) -> SqliteSaver:
    import sqlite3

    saver = SqliteSaver(sqlite3.connect(str(folder / f"{calls}.sqlite"), check_same_thread=False))
    builder = StateGraph(MessagesState)
    builder.add_node("chat", lambda state: {})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    builder.compile(checkpointer=saver).update_state(THREAD, {"messages": wide(calls)}, "chat")
    return saver


def shown(calls: int) -> Callable[[], object]:
    before = [*wide(calls), HumanMessage("next", id="h2")]
    fixed = repair_messages(before)
    preview = ThreadPreview(
        "wide", "", "head", "messages", before, fixed.messages, fixed.actions, (), "would_repair"
    )
    return lambda: print_preview(preview, Console(file=io.StringIO(), width=160))


def growth(label: str, make: Callable[[int], Callable[[], object]], sizes: Any) -> None:
    small, large = (best_seconds(make(n)) for n in sizes)
    print(f"  {label:<16} {sizes[0]:>7,} -> {sizes[1]:>7,} calls  {large / small:5.2f}")


def main() -> None:
    print("growth on one wide message: time(2n) / time(n) (2.0 means linear)")
    growth("engine", lambda n: (lambda history: lambda: repair_messages(history))(wide(n)), SIZES)
    growth("first look", first_look, SIZES)
    with tempfile.TemporaryDirectory() as folder:
        savers = {n: stored(n, Path(folder)) for n in SIZES}
        growth(
            "wrapped load",
            lambda n: lambda: PatchingCheckpointer(savers[n]).get_tuple(THREAD),
            SIZES,
        )
        growth("scan", lambda n: lambda: repair_threads(savers[n], dry_run=True, min_idle=0), SIZES)
    growth("show table", shown, SHOW_SIZES)


if __name__ == "__main__":
    main()
