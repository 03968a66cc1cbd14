"""The Agent Server's rollback (`multitask_strategy="rollback"`), in a process of its own:
a run cancelled mid-way as the server cancels it, then `adelete_for_runs` with its id
through langgraph-api's own adapter over the one line, as the server's worker calls it
(`worker_runtime.cleanup_custom_checkpointer_for_run`). Graphs are compiled on the
adapter and each run carries its id in its config, as the server's runs do.

    python -m tests.support.one_line_rollback TARGET   (prints what it saw, as JSON)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from tests.support.one_line_sweep import checkpoints, delta_state, run_config, served, shown

entered = asyncio.Event()
"""Set when a run reaches the step it hangs in: the server cancels it there."""


async def work(state: Any) -> dict[str, Any]:
    """The last step: it hangs on "hang" (a slow tool), so the run can be cancelled."""
    said = [m.content for m in state["messages"]]
    if "hang" in said[-2:] or "approved: hang" in said[-1:]:
        entered.set()
        await asyncio.sleep(3600)
    return {"messages": [AIMessage(f"done after {len(said)}")]}


def talking(saver: Any, state: Any = MessagesState) -> Any:
    builder = StateGraph(state)
    builder.add_node("chat", lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}")]})
    builder.add_node("work", work)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "work")
    builder.add_edge("work", END)
    return builder.compile(checkpointer=saver)


def approving(saver: Any) -> Any:
    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"approved: {interrupt('approve?')}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_node("work", work)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "work")
    builder.add_edge("work", END)
    return builder.compile(checkpointer=saver)


async def cancelled(graph: Any, given: Any, config: dict[str, Any]) -> None:
    """A run started, and cancelled in its hanging step once its checkpoints are down."""
    entered.clear()
    run = asyncio.create_task(graph.ainvoke(given, config))
    await asyncio.wait_for(entered.wait(), 60)
    await asyncio.wait_for(_saved_before_work(graph, config), 60)
    run.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await run


async def _saved_before_work(graph: Any, config: dict[str, Any]) -> None:
    """Until the checkpoint the hanging step runs from is stored (it is saved in the
    background while the step runs)."""
    thread = {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
    while True:
        state = await graph.aget_state(thread)
        if state.next == ("work",) and state.metadata.get("run_id") == config["metadata"]["run_id"]:
            return
        await asyncio.sleep(0.01)


async def rollbacks(target: str) -> dict[str, Any]:
    async with served(target) as (inner, caps, adapter):
        graphs = {
            "plain": talking(adapter),
            "delta": talking(adapter, delta_state()),
            "asking": approving(adapter),
            "other": talking(adapter),
        }
        for thread_id, graph in graphs.items():
            await graph.ainvoke({"messages": [HumanMessage("hello")]}, run_config(thread_id))
        before = {t: [await checkpoints(adapter, t), await shown(g, t)] for t, g in graphs.items()}
        seen: dict[str, Any] = {}
        for thread_id in ("plain", "delta", "asking"):
            config = run_config(thread_id)
            given: Any = (
                Command(resume="hang")
                if thread_id == "asking"
                else {"messages": [HumanMessage("hang")]}
            )
            await cancelled(graphs[thread_id], given, config)
            during = await checkpoints(adapter, thread_id)
            await adapter.adelete_for_runs([config["metadata"]["run_id"]])
            after = [
                await checkpoints(adapter, thread_id),
                await shown(graphs[thread_id], thread_id),
            ]
            seen[thread_id] = {"during": during, "after": after}
        other = [await checkpoints(adapter, "other"), await shown(graphs["other"], "other")]
        await graphs["plain"].ainvoke({"messages": [HumanMessage("go on")]}, run_config("plain"))
        await graphs["delta"].ainvoke({"messages": [HumanMessage("go on")]}, run_config("delta"))
        await graphs["asking"].ainvoke(Command(resume="yes"), run_config("asking"))
        went_on = {t: await shown(graphs[t], t) for t in ("plain", "delta", "asking")}
        await adapter.adelete_for_runs([])
        await adapter.adelete_for_runs(["no-such-run"])
    return {
        "inner": type(inner).__name__,
        "has_adelete_for_runs": caps.has_adelete_for_runs,
        "before": before,
        "seen": seen,
        "other": other,
        "went_on": went_on,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(rollbacks(sys.argv[1]))))
