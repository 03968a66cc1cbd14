"""Throughput of `repair_messages` on clean and 1%-dangling histories of growing size.

Prints messages per second and the per-message cost ratio from one size to the
next (close to 1.0 means linear). Run: python benchmarks/bench_engine.py
"""

from __future__ import annotations

import time

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import repair_messages

SIZES = (1_000, 10_000, 100_000)


def make_history(size: int, dangling_every: int | None) -> list[BaseMessage]:
    """Turns of human, AI calling a tool, the result, AI answer; every Nth result missing."""
    history: list[BaseMessage] = []
    turn = 0
    while len(history) < size:
        call_id = f"call_{turn}"
        history.append(HumanMessage(f"question {turn}", id=f"h{turn}"))
        history.append(
            AIMessage("", id=f"a{turn}", tool_calls=[{"name": "search", "args": {}, "id": call_id}])
        )
        if not dangling_every or turn % dangling_every:
            history.append(ToolMessage("result", tool_call_id=call_id, id=f"t{turn}"))
        history.append(AIMessage(f"answer {turn}", id=f"b{turn}"))
        turn += 1
    return history[:size]


def best_seconds(history: list[BaseMessage], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        repair_messages(history)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    for label, dangling_every in (("clean", None), ("1% dangling", 25)):
        print(f"\n{label}")
        print(f"{'messages':>10} {'msgs/s':>14} {'cost/msg vs previous size':>28}")
        previous: float | None = None
        for size in SIZES:
            history = make_history(size, dangling_every)
            result = repair_messages(history)
            if dangling_every is None:
                assert result.messages is history, "clean history must not be copied"
            seconds = best_seconds(history, rounds=max(3, 300_000 // size))
            per_message = seconds / size
            growth = f"{per_message / previous:.2f}x" if previous else "-"
            print(f"{size:>10} {size / seconds:>14,.0f} {growth:>28}")
            previous = per_message


if __name__ == "__main__":
    main()
