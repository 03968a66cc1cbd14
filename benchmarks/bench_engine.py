"""How fast `repair_messages` is, against deepagents' PatchToolCallsMiddleware.

All figures are ratios measured in one process: the best CPU time of several
rounds, the works run in turn every round (their order rotating), with the
garbage collector off while timing. No absolute time is printed: ratios hold
on any machine, busy or not.

- against deepagents (its patching hook, `before_agent`) on 100k messages:
  deepagents' time / ours (above 1.0 means faster than deepagents), for
  turns of a question, an AI message with one to three calls, their results
  and an answer, with every call answered (clean), 1% and 10% of the calls
  without a result; and for turns of one call where the calls left without a
  result make up 10% of the messages;
- the cost of valid histories whose parallel results come back in any order
  or reuse ids, and of a history with 1% of its results misplaced, against
  the clean history (1.0 means as cheap);
- one block of 8,000 calls answered in reverse order against in order;
- growth: time(2n) / time(n) for reversed results (2.0 means linear);
- a token budget (`max_input_tokens`), on clean histories of 1,000 and 10,000
  messages of texts of 300 to 1,500 characters: with a budget they fit in
  against without; LangChain's `count_tokens_approximately` of the list against
  our check; `trim_messages` against our trim at half the count; and reading
  every text's length and name alone (what any budget check reads beyond the
  pairing proof) against the engine without a budget. Then shorter histories:
  within a 200k window in text and in text blocks (a bound decides without
  counting) and just within (every message counted); and the growth
  time(2n) / time(n) of a trim of a history ten times over its budget (2.0
  means linear; goal: at most 2.2).

`--reference SRC` times the budget's works (fits, trims, a history no trim makes fit)
against the release whose `src` folder is SRC (a `git worktree` of it), loaded in the
same process under another name, the works of both in turn, five runs.

    python benchmarks/bench_engine.py [deepagents|arrangements|growth|budget ...]
    python benchmarks/bench_engine.py --reference ../reference/src
"""

from __future__ import annotations

import functools
import gc
import importlib.util
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from deepagents.middleware.patch_tool_calls import PatchToolCallsMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages

from langgraph_checkpoint_repair import RepairPolicy, repair_messages

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


def make_turns(size: int, unanswered_share: float = 0.0) -> list[BaseMessage]:
    """`size` messages in turns of human, AI calling one to three tools in turn,
    their results, AI answer; `unanswered_share` of the calls, spread evenly,
    get no result."""
    history: list[BaseMessage] = []
    turn = calls = unanswered = 0
    while len(history) + 3 + (count := 1 + turn % 3) <= size:
        ids = [f"call_{turn}_{k}" for k in range(count)]
        history.append(HumanMessage(f"question {turn}", id=f"h{turn}"))
        entries: list[Any] = [{"name": "search", "args": {}, "id": i} for i in ids]
        history.append(AIMessage("", id=f"a{turn}", tool_calls=entries))
        for call_id in ids:
            calls += 1
            if unanswered < unanswered_share * calls:
                unanswered += 1
            else:
                history.append(ToolMessage("result", tool_call_id=call_id, id=f"t-{call_id}"))
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


def make_late_results(history: list[BaseMessage], every: int) -> list[BaseMessage]:
    """`history` with every `every`th result one message late, after the next
    message: a broken history the engine repairs by moving results back."""
    late = list(history)
    seen = 0
    for n in range(len(late) - 1):
        if isinstance(late[n], ToolMessage):
            seen += 1
            if seen % every == 0:
                late[n], late[n + 1] = late[n + 1], late[n]
    return late


def best_seconds(work: Callable[[], object], rounds: int = 7) -> float:
    """Best of `rounds`, with the garbage collector off while timing, as timeit does."""
    return best_of_each([work], rounds)[0]


def best_of_each(works: Sequence[Callable[[], object]], rounds: int = 15) -> list[float]:
    """Best CPU time of each of `works`, run in turn every round with the garbage
    collector off. CPU time (not wall time) leaves out the moments another
    process has the CPU, so the ratios hold on a busy machine too; the order
    rotates every round, so that no work always runs after the same one."""
    best = [float("inf")] * len(works)
    gc.collect()
    gc.disable()
    try:
        for turn in range(rounds):
            for k in range(len(works)):
                n = (k + turn) % len(works)
                start = time.process_time()
                result = works[n]()
                best[n] = min(best[n], time.process_time() - start)
                del result  # freeing what a call returned is the caller's cost, not the call's
    finally:
        gc.enable()
    return best


def ours(history: Sequence[BaseMessage]) -> Callable[[], object]:
    return functools.partial(repair_messages, history)


def deepagents(history: list[BaseMessage]) -> Callable[[], object]:
    hook = PatchToolCallsMiddleware().before_agent
    state: Any = {"messages": history}
    return functools.partial(hook, state, None)  # type: ignore[arg-type]


SCENARIOS: tuple[tuple[str, str, Callable[[], list[BaseMessage]]], ...] = (
    ("clean", "1-3 calls a turn, every call answered", lambda: make_turns(SIZE)),
    ("1% of calls", "1-3 calls a turn, 1% of the calls unanswered", lambda: make_turns(SIZE, 0.01)),
    (
        "10% of calls",
        "1-3 calls a turn, 10% of the calls unanswered",
        lambda: make_turns(SIZE, 0.1),
    ),
    (
        "10% of messages",
        "1 call a turn, unanswered calls are 10% of the messages",
        lambda: make_history(SIZE, dangling_share=0.1),
    ),
)


def against_deepagents() -> None:
    print(f"against deepagents' before_agent, {SIZE:,} messages")
    print("  ratio = deepagents' best CPU time / ours (above 1.0: ours is faster)")
    for label, definition, build in SCENARIOS:
        history = build()
        mine, theirs = best_of_each([ours(history), deepagents(history)])
        print(f"  {label:<16} {theirs / mine:5.2f}x   {definition}")


def arrangements() -> None:
    print(f"valid parallel results, {SIZE:,} messages")
    print("  ratio = our best CPU time on that history / on the clean one (1.0: as cheap)")
    orders = ("in order", "reversed", "interleaved", "reused ids")
    histories = [make_history(SIZE), *(make_parallel(SIZE, order) for order in orders)]
    for history in histories[1:]:
        assert repair_messages(history).messages is history, "a valid history is never copied"
    clean, *times = best_of_each([ours(h) for h in histories])
    for order, seconds in zip(orders, times, strict=True):
        print(f"  {order:<14} {seconds / clean:5.2f}x")
    late = make_late_results(make_history(SIZE), every=25)
    clean, misplaced = best_of_each([ours(make_history(SIZE)), ours(late)])
    print(f"  {'1% misplaced':<14} {misplaced / clean:5.2f}x")
    block = 8_000
    forward, backward = best_of_each(
        [ours(make_parallel(block + 2, order, block)) for order in ("in order", "reversed")]
    )
    print(f"one block of {block:,} calls: reversed / in order = {backward / forward:.2f}x")


def growth() -> None:
    """Raw, and against a walk that reads each result's id (the same memory, no
    work), which grows alike when the history outgrows the CPU caches."""
    print("growth, reversed results: time(2n) / time(n), raw and against reading the ids")
    for label, n, parallel in (("8 calls a turn", 50_000, PARALLEL), ("one block", 20_000, 0)):
        small = make_parallel(n, "reversed", parallel or n - 2)
        large = make_parallel(2 * n, "reversed", parallel or 2 * n - 2)
        works = [ours(small), ours(large), read_ids(small), read_ids(large)]
        mine_n, mine_2n, read_n, read_2n = best_of_each(works)
        raw, relative = mine_2n / mine_n, (mine_2n / read_2n) / (mine_n / read_n)
        print(f"  {label:<14} {n:>7,} -> {2 * n:>7,}  {raw:5.2f}  {relative:5.2f}")


def read_ids(history: list[BaseMessage]) -> Callable[[], object]:
    def work() -> None:
        for message in history:
            if isinstance(message, ToolMessage):
                _ = message.tool_call_id
            elif isinstance(message, AIMessage):
                _ = [c["id"] for c in message.tool_calls]

    return work


def with_blocks(history: list[BaseMessage]) -> list[BaseMessage]:
    """`history` with each human question as a text block, as multimodal apps store it."""
    return [
        HumanMessage([{"type": "text", "text": m.content}], id=m.id)
        if isinstance(m, HumanMessage) and isinstance(m.content, str)
        else m
        for m in history
    ]


WINDOW = RepairPolicy(max_input_tokens=200_000)
"""A usual context window, with the default reserve."""


def within(history: list[BaseMessage], factor: float) -> RepairPolicy:
    """A budget of `factor` times the history's tokens (reserve 0)."""
    size = count_tokens_approximately(history)
    return RepairPolicy(max_input_tokens=max(1, int(size * factor)), context_reserve=0)


def make_long_turns(size: int) -> list[BaseMessage]:
    """`make_turns(size)` as agents write them: every text 300 to 1,500 characters
    (the same for every run), every call with a query."""
    rng = random.Random(size)
    history: list[BaseMessage] = []
    for message in make_turns(size):
        text = "lorem ipsum " * (rng.randint(300, 1500) // 12)
        if isinstance(message, AIMessage):
            calls: Any = [
                {**c, "args": {"query": f"{text[:40]} {c['id']}"}} for c in message.tool_calls
            ]
            history.append(AIMessage(text, id=message.id, tool_calls=calls))
        else:
            history.append(message.model_copy(update={"content": text}))
    return history


def trim_like_agents(history: list[BaseMessage], budget: int) -> Callable[[], object]:
    """LangChain's `trim_messages` as agents call it before a model call."""
    return functools.partial(
        trim_messages,
        history,
        max_tokens=budget,
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
        include_system=True,
    )


def read_texts(history: list[BaseMessage]) -> Callable[[], object]:
    """What any budget check reads beyond the pairing proof, and nothing else: each
    message's text length and name (the proof reads neither)."""

    def work() -> int:
        total = 0
        for message in history:
            total += len(message.content) + len(message.name or "")
        return total

    return work


def budgets() -> None:
    print("a token budget, best CPU times on clean histories of texts of 300 to 1,500 characters")
    print("  fits (twice its count): ours with the budget / without (goal: at most 1.5x),")
    print("  LangChain's count_tokens_approximately of the list / ours (goal: at least 3x);")
    print("  over (half its count): trim_messages / our trim (goal: at least 1.5x)")
    for size in (1_000, 10_000):
        history = make_long_turns(size)
        fits, over = within(history, 2.0), within(history, 0.5)
        assert repair_messages(history, policy=fits).messages is history
        assert repair_messages(history, policy=over).changed
        budget = over.input_budget
        assert budget is not None
        without, checked, counted, trimmed, theirs, reading = best_of_each(
            [
                ours(history),
                functools.partial(repair_messages, history, policy=fits),
                functools.partial(count_tokens_approximately, history),
                functools.partial(repair_messages, history, policy=over),
                trim_like_agents(history, budget),
                read_texts(history),
            ]
        )
        print(
            f"  {size:>6,} messages: with / without {checked / without:5.2f}x,"
            f"  count / ours {counted / checked:5.2f}x,  trim_messages / our trim"
            f" {theirs / trimmed:5.2f}x;  reading the texts alone / without"
            f" {reading / without:5.2f}x"
        )
    print("other clean histories, with the budget / without (short texts, as bench 'growth')")
    for size in (1_000, 10_000):
        history = make_turns(size)
        cases = (
            ("within a 200k window", history, WINDOW),
            ("the same, text blocks", with_blocks(history), WINDOW),
            ("just within (1.02x)", history, within(history, 1.02)),
        )
        for label, messages, policy in cases:
            assert repair_messages(messages, policy=policy).messages is messages
            without, budgeted = best_of_each(
                [ours(messages), functools.partial(repair_messages, messages, policy=policy)]
            )
            print(f"  {size:>6,} messages, {label:<22} {budgeted / without:5.2f}x")
    print("a trim of a history ten times over its budget: time(2n) / time(n) (goal: at most 2.2)")
    n = 20_000
    small, large = make_turns(n), make_turns(2 * n)
    trims = [functools.partial(repair_messages, h, policy=within(h, 0.1)) for h in (small, large)]
    assert all(trim().changed for trim in trims)
    once_n, once_2n = best_of_each(trims, rounds=7)
    print(f"  {n:>7,} -> {2 * n:>7,} messages  {once_2n / once_n:5.2f}")


def release_cases(repair: Callable[..., Any]) -> dict[str, Callable[[], object]]:
    """The budget's works timed against an earlier release (`against_release`), by
    `repair` (a release's `repair_messages`): a clean history without a budget and
    within one, trims of a history two and ten times over it (the marker after the
    task, then before it), and a history no trim makes fit."""
    long, short = make_long_turns(10_000), make_turns(20_000)
    task_first = [HumanMessage("the task " * 50, id="task"), *long[1:]]
    too_large = [HumanMessage("pasted log " * 400_000, id="log"), *long[1:]]
    cases: dict[str, tuple[list[BaseMessage], RepairPolicy | None]] = {
        "clean, no budget": (long, None),
        "fits its budget": (long, within(long, 2.0)),
        "trim, half (older turns)": (long, within(long, 0.5)),
        "trim, half (after the task)": (task_first, within(task_first, 0.5)),
        "trim, ten times over": (short, within(short, 0.1)),
        "over, no trim fits": (too_large, within(long, 0.5)),
    }
    return {
        label: functools.partial(repair, history, policy=_policy_of(repair, policy))
        for label, (history, policy) in cases.items()
    }


def _policy_of(repair: Callable[..., Any], policy: RepairPolicy | None) -> Any:
    """`policy` as the release of `repair` makes it (its own `RepairPolicy` class)."""
    if policy is None:
        return None
    own = sys.modules[repair.__module__.split(".")[0]].RepairPolicy
    return own(max_input_tokens=policy.max_input_tokens, context_reserve=policy.context_reserve)


def _reference(src: str) -> Callable[..., Any]:
    """The `repair_messages` of the release in `src`, loaded beside this one under a
    name of its own (the package imports itself by relative imports only)."""
    folder = os.path.join(src, "langgraph_checkpoint_repair")
    spec = importlib.util.spec_from_file_location(
        "reference_release",
        os.path.join(folder, "__init__.py"),
        submodule_search_locations=[folder],
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_release"] = module
    spec.loader.exec_module(module)
    repair: Callable[..., Any] = module.repair_messages
    return repair


def against_release(reference: str, runs: int = 5) -> None:
    """This release's budget works against those of the release in `reference` (its
    `src` folder), in one process: each run times every work of both in turn, the order
    rotating; the ratio is this release's best CPU time / the reference's."""
    print(f"a token budget, this release / the reference ({reference}), {runs} runs")
    print("  ratio = our best CPU time / the reference's (1.0: as fast; below: faster)")
    mine, theirs = release_cases(repair_messages), release_cases(_reference(reference))
    labels = list(mine)
    ratios: dict[str, list[float]] = {label: [] for label in labels}
    for _ in range(runs):
        best = best_of_each([*mine.values(), *theirs.values()], rounds=7)
        for n, label in enumerate(labels):
            ratios[label].append(best[n] / best[n + len(labels)])
    for label, found in ratios.items():
        listed = ", ".join(f"{r:.2f}" for r in found)
        print(f"  {label:<30} median {statistics.median(found):5.2f}x  ({listed})")


SECTIONS: dict[str, Callable[[], None]] = {
    "deepagents": against_deepagents,
    "arrangements": arrangements,
    "growth": growth,
    "budget": budgets,
}


def main() -> None:
    """Every section, or those named on the command line (`budget`, say); with
    `--reference SRC`, the budget against the release in SRC instead."""
    args = sys.argv[1:]
    if args[:1] == ["--reference"] and len(args) == 2:
        against_release(args[1])
        return
    for name in args or SECTIONS:
        if name not in SECTIONS:
            raise SystemExit(f"no section {name!r}: choose from {', '.join(SECTIONS)}")
        SECTIONS[name]()


if __name__ == "__main__":
    main()
