"""Throughput of `repair_messages` on clean and 1%-dangling histories of growing size.

Prints messages per second, the per-message cost ratio from one size to the
next (close to 1.0 means linear), and the time against a bare walk that only
touches each message once, measured on the same list in the same run: when
the history outgrows the CPU caches both slow down together, and that last
ratio stays flat if the repair itself is linear.

    python benchmarks/bench_engine.py
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import repair_messages

SIZES = (1_000, 10_000, 100_000)


def make_history(size: int, dangling_every: int | None) -> list[BaseMessage]:
    """`size` messages in whole turns of human, AI calling a tool, the result, AI answer.

    With `dangling_every=N`, the result of every Nth call is missing.
    """
    history: list[BaseMessage] = []
    turn = 0
    while len(history) + 4 <= size:
        call_id = f"call_{turn}"
        history.append(HumanMessage(f"question {turn}", id=f"h{turn}"))
        history.append(
            AIMessage("", id=f"a{turn}", tool_calls=[{"name": "search", "args": {}, "id": call_id}])
        )
        if not dangling_every or turn % dangling_every:
            history.append(ToolMessage("result", tool_call_id=call_id, id=f"t{turn}"))
        history.append(AIMessage(f"answer {turn}", id=f"b{turn}"))
        turn += 1
    history.extend(HumanMessage(f"more {n}") for n in range(size - len(history)))
    return history


def best_seconds(work: Callable[[], object], rounds: int) -> float:
    """Best of `rounds`, with the garbage collector off while timing, as timeit does."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - start)
    finally:
        gc.enable()
    return best


def bare_walk(history: list[BaseMessage]) -> None:
    """The least any pass must do: touch every message once."""
    for message in history:
        _ = message.type


def main() -> None:
    for label, dangling_every in (("clean", None), ("1% dangling", 25)):
        print(f"\n{label}")
        print(f"{'messages':>10} {'msgs/s':>14} {'cost/msg vs previous':>22} {'vs bare walk':>14}")
        previous: float | None = None
        for size in SIZES:
            history = make_history(size, dangling_every)
            result = repair_messages(history)
            if dangling_every is None:
                assert result.messages is history, "clean history must not be copied"
            rounds = max(5, 300_000 // size)
            seconds = best_seconds(functools.partial(repair_messages, history), rounds)
            walk = best_seconds(functools.partial(bare_walk, history), rounds)
            per_message = seconds / size
            growth = f"{per_message / previous:.2f}x" if previous else "-"
            print(f"{size:>10} {size / seconds:>14,.0f} {growth:>22} {seconds / walk:>13.2f}x")
            previous = per_message


if __name__ == "__main__":
    main()
