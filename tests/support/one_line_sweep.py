"""The Agent Server's TTL sweep, in a process of its own: the one line
(`langgraph_checkpoint_repair.server.checkpointer`) opened as the server opens it,
wrapped in langgraph-api's own adapter with the capabilities it detects, graphs
compiled on the adapter and run with each run's id in their config as the server
runs them, then `aprune` with each strategy the sweep sends. langgraph-api reads its
settings at import, so it runs here, away from the test process.

    python -m tests.support.one_line_sweep TARGET   (prints what it saw, as JSON)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

os.environ.setdefault("REDIS_URI", "redis://127.0.0.1:1")  # read at import, never dialled
os.environ.setdefault("DATABASE_URI", ":memory:")

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

THREADS = ("plain", "asking", "delta", "deleted", "deleted-all")


def run_config(thread_id: str) -> dict[str, Any]:
    """A run's config as the server builds it: the run id in `configurable` and in the
    metadata the checkpoints carry, with the graph's id."""
    run_id = str(uuid.uuid4())
    return {
        "configurable": {"thread_id": thread_id, "run_id": run_id},
        "metadata": {"run_id": run_id, "graph_id": "agent", "assistant_id": "a-1"},
    }


def chat(saver: Any, state: Any = MessagesState) -> Any:
    builder = StateGraph(state)
    builder.add_node("chat", lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}")]})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def asking(saver: Any) -> Any:
    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"approved: {interrupt('approve?')}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", lambda s: {"messages": [AIMessage("a reply")]})
    builder.add_node("ask", ask)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


def delta_state() -> Any:
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph.message import _messages_delta_reducer

    reducer: Any = _messages_delta_reducer
    channel: Any = DeltaChannel(reducer, snapshot_frequency=50)
    return TypedDict("DeltaChat", {"messages": Annotated[list[AnyMessage], channel]})  # type: ignore[operator]


async def checkpoints(adapter: Any, thread_id: str) -> int:
    return len([t async for t in adapter.alist({"configurable": {"thread_id": thread_id}})])


async def shown(graph: Any, thread_id: str) -> Any:
    state = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    messages = [(m.type, m.content) for m in state.values.get("messages", [])]
    return [messages, list(state.next), [(i.id, i.value) for i in state.interrupts]]


@contextlib.asynccontextmanager
async def served(target: str) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The one line on `target`, as the server opens it: the saver it yields, the
    capabilities langgraph-api detects on its class, and the adapter the server wraps
    it in."""
    from langgraph_api._checkpointer._adapter import (  # type: ignore[import-untyped]
        CheckpointerCapabilities,
        _CustomCheckpointerAdapter,
    )

    from langgraph_checkpoint_repair.server import checkpointer

    os.environ["LANGGRAPH_REPAIR_TARGET"] = target
    async with checkpointer() as inner:
        caps = CheckpointerCapabilities.from_type(type(inner))
        yield inner, caps, _CustomCheckpointerAdapter(inner, caps)


async def sweep(target: str) -> dict[str, Any]:
    async with served(target) as (inner, caps, adapter):
        graphs = {
            "plain": chat(adapter),
            "asking": asking(adapter),
            "delta": chat(adapter, delta_state()),
            "deleted": chat(adapter),
            "deleted-all": chat(adapter),
        }
        for thread_id, graph in graphs.items():
            for turn in range(3):
                await graph.ainvoke(
                    {"messages": [HumanMessage(f"turn {turn}")]}, run_config(thread_id)
                )
                if thread_id == "asking" and turn < 2:
                    await graph.ainvoke(Command(resume=f"yes {turn}"), run_config(thread_id))
        before = {t: [await checkpoints(adapter, t), await shown(graphs[t], t)] for t in THREADS}
        await adapter.aprune(["plain", "asking", "delta"], strategy="keep_latest")
        await adapter.aprune(["deleted"], strategy="delete")
        await adapter.aprune(["deleted-all"], strategy="delete_all")
        after = {t: [await checkpoints(adapter, t), await shown(graphs[t], t)] for t in THREADS}
        try:
            await adapter.aprune(["plain"], strategy="keep_some")
            unknown = "accepted"
        except ValueError as error:
            unknown = f"ValueError: {error}"
        copies = await copied(adapter, graphs)
        await graphs["asking"].ainvoke(Command(resume="yes at last"), run_config("asking"))
        answered = await shown(graphs["asking"], "asking")
    return {
        "inner": type(inner).__name__,
        "capabilities": {
            "aprune": caps.has_aprune,
            "adelete_thread": caps.has_adelete_thread,
            "acopy_thread": caps.has_acopy_thread,
        },
        "before": before,
        "after": after,
        "unknown": unknown,
        "answered": answered,
        "copies": copies,
    }


async def copied(adapter: Any, graphs: dict[str, Any]) -> dict[str, Any]:
    """The delta thread and the waiting one copied (the server's POST /threads/ID/copy),
    then each copy sent on alone: the delta copy a new turn, the waiting copy its answer."""
    found: dict[str, Any] = {}
    for source in ("delta", "asking"):
        target = f"{source}-copy"
        before = await shown(graphs[source], source)
        await adapter.acopy_thread(source, target)
        same = await shown(graphs[source], target) == before
        if source == "delta":
            await graphs[source].ainvoke(
                {"messages": [HumanMessage("only here")]}, run_config(target)
            )
        else:
            await graphs[source].ainvoke(Command(resume="copy's answer"), run_config(target))
        found[source] = {
            "same": same,
            "counts": [await checkpoints(adapter, source), await checkpoints(adapter, target)],
            "source_unchanged": await shown(graphs[source], source) == before,
            "copy_went_on": (await shown(graphs[source], target))[0][-1],
        }
    try:
        await adapter.acopy_thread("plain", "delta-copy")
        found["onto_a_thread"] = "copied"
    except ValueError as error:
        found["onto_a_thread"] = str(error)
    return found


if __name__ == "__main__":
    print(json.dumps(asyncio.run(sweep(sys.argv[1]))))
