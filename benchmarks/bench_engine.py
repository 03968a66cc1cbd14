"""How fast `repair_messages` is, against deepagents' PatchToolCallsMiddleware.

All figures are ratios measured in one process, best of several rounds with
the garbage collector off while timing, so they hold on any machine:

- against deepagents (its patching hook, `before_agent`) on 100k messages,
  clean, with 1% and with 10% of the messages being calls left unanswered
  (above 1.0 means faster than deepagents);
- the cost per message of valid histories whose parallel results come back
  in any order or reuse ids, against the clean history (1.0 means as cheap);
- one block of 8,000 calls answered in reverse order against in order;
- growth: time(2n) / time(n) for reversed results (2.0 means linear).

    python benchmarks/bench_engine.py
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable, Sequence
from typing import Any

from deepagents.middleware.patch_tool_calls import PatchToolCallsMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import repair_messages

SIZE = 100_000
PARALLEL = 8


def make_history(
    size: int, dangling_every: int | None = None, dangling_share: float = 0.0
) -> list[BaseMessage]:
    """`size` messages in turns of human, AI calling a tool, the result, AI answer.

    With `dangling_every=N` the result of every Nth call is missing; with
    `dangling_share` that share of the messages are calls left unanswered.
    """
    history: list[BaseMessage] = []
    turn = dangling = 0
    while len(history) + 4 <= size:
        call_id = f"call_{turn}"
        history.append(HumanMessage(f"question {turn}", id=f"h{turn}"))
        history.append(
            AIMessage("", id=f"a{turn}", tool_calls=[{"name": "search", "args": {}, "id": call_id}])
        )
        if (dangling_every and turn % dangling_every == 0) or (
            dangling < dangling_share * (len(history) + 2)
        ):
            dangling += 1
        else:
            history.append(ToolMessage("result", tool_call_id=call_id, id=f"t{turn}"))
        history.append(AIMessage(f"answer {turn}", id=f"b{turn}"))
        turn += 1
    history.extend(HumanMessage(f"more {n}") for n in range(size - len(history)))
    return history


def make_parallel(size: int, order: str, parallel: int = PARALLEL) -> list[BaseMessage]:
    """Valid turns of `parallel` calls whose results come back in `order`:
    "in order", "reversed", "interleaved" (odd calls first) or "reused ids"
    (`call_0`... every turn, as some models do)."""
    history: list[BaseMessage] = []
    turn = 0
    while len(history) + parallel + 2 <= size:
        prefix = "call" if order == "reused ids" else f"call_{turn}"
        ids = [f"{prefix}_{k}" for k in range(parallel)]
        calls: list[Any] = [{"name": "search", "args": {}, "id": i} for i in ids]
        history.append(HumanMessage(f"question {turn}", id=f"h{turn}"))
        history.append(AIMessage("", id=f"a{turn}", tool_calls=calls))
        answered = {"reversed": ids[::-1], "interleaved": ids[1::2] + ids[::2]}.get(order, ids)
        history.extend(ToolMessage("r", tool_call_id=i, id=f"t{turn}-{i}") for i in answered)
        turn += 1
    history.extend(HumanMessage(f"more {n}") for n in range(size - len(history)))
    return history


def best_seconds(work: Callable[[], object], rounds: int = 7) -> float:
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


def ours(history: Sequence[BaseMessage]) -> Callable[[], object]:
    return functools.partial(repair_messages, history)


def deepagents(history: list[BaseMessage]) -> Callable[[], object]:
    hook = PatchToolCallsMiddleware().before_agent
    state: Any = {"messages": history}
    return functools.partial(hook, state, None)  # type: ignore[arg-type]


def against_deepagents() -> None:
    print(f"against deepagents, {SIZE:,} messages (above 1.0: faster)")
    for label, share in (("clean", 0.0), ("1% dangling", 0.01), ("10% dangling", 0.1)):
        history = make_history(SIZE, dangling_share=share)
        mine, theirs = best_seconds(ours(history)), best_seconds(deepagents(history))
        times = f"{mine * 1e3:8.1f} ms, deepagents {theirs * 1e3:8.1f} ms"
        print(f"  {label:<14} {times}  {theirs / mine:5.2f}x")


def arrangements() -> None:
    clean = best_seconds(ours(make_history(SIZE))) / SIZE
    print(f"valid parallel results, {SIZE:,} messages, cost per message vs clean")
    for order in ("in order", "reversed", "interleaved", "reused ids"):
        history = make_parallel(SIZE, order)
        assert repair_messages(history).messages is history, "a valid history is never copied"
        per_message = best_seconds(ours(history)) / SIZE
        print(f"  {order:<14} {per_message * 1e9:8.0f} ns/msg  {per_message / clean:5.2f}x")
    block = 8_000
    forward = best_seconds(ours(make_parallel(block + 2, "in order", block)))
    backward = best_seconds(ours(make_parallel(block + 2, "reversed", block)))
    print(f"one block of {block:,} calls: reversed / in order = {backward / forward:.2f}x")


def growth() -> None:
    print("growth, reversed results: time(2n) / time(n)")
    for n in (25_000, 50_000):
        small = best_seconds(ours(make_parallel(n, "reversed")))
        large = best_seconds(ours(make_parallel(2 * n, "reversed")))
        print(f"  {n:>7,} -> {2 * n:>7,} {large / small:5.2f}")
    one = best_seconds(ours(make_parallel(20_000, "reversed", 19_998)))
    two = best_seconds(ours(make_parallel(40_000, "reversed", 39_998)))
    print(f"  one block, 20,000 -> 40,000 {two / one:5.2f}")


def main() -> None:
    against_deepagents()
    arrangements()
    growth()


if __name__ == "__main__":
    main()
