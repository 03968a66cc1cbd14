"""Graphs that ask a human twice, in the three shapes a stale answer takes.

- `one_task`: one node calls `interrupt()` twice;
- `subgraph`: a parent node runs a subgraph of two asking nodes;
- `goto`: the asking node is reached with `Command(goto=..., resume=...)`.

`answer_first` brings a thread to its second question with a plain
`Command(resume="yes")`: the head then holds a stale answer, and `invoke(None)`
hands "yes" to the second question unless something leaves it out.
"""

from __future__ import annotations

import sys
from typing import Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from tests.support.stores import Store

SHAPES = ("one_task", "subgraph", "goto")
ASYNC_INTERRUPT = sys.version_info >= (3, 11)
ASYNC_REASON = (
    "interrupt() in a node run by ainvoke needs Python 3.11: LangGraph reads the run's "
    "config from a context variable that Python 3.10's asyncio does not carry into the node"
)
needs_async_interrupt = pytest.mark.skipif(not ASYNC_INTERRUPT, reason=ASYNC_REASON)


def drivable(store: Store) -> None:
    """Skip a test whose store is driven with ainvoke where interrupt() cannot run there."""
    if store.is_async and not ASYNC_INTERRUPT:
        pytest.skip(ASYNC_REASON)


FIRST, SECOND = "approve the refund?", "confirm the amount?"


class Answers(TypedDict):
    out: str


def _ask_twice(state: Answers) -> dict[str, str]:
    first = interrupt(FIRST)
    second = interrupt(SECOND)
    return {"out": f"got:{first!r}+{second!r}"}


def _ask_first(state: Answers) -> dict[str, str]:
    return {"out": f"got:{interrupt(FIRST)!r}"}


def _ask_second(state: Answers) -> dict[str, str]:
    return {"out": state["out"] + f"+{interrupt(SECOND)!r}"}


def build(shape: str, saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    graph = StateGraph(Answers)
    if shape == "one_task":
        graph.add_node("ask", _ask_twice)
        graph.add_edge(START, "ask")
        graph.add_edge("ask", END)
        return graph.compile(checkpointer=saver)
    if shape == "subgraph":
        asking = StateGraph(Answers)
        asking.add_node("first", _ask_first)
        asking.add_node("second", _ask_second)
        asking.add_edge(START, "first")
        asking.add_edge("first", "second")
        asking.add_edge("second", END)
        graph.add_node("asking", asking.compile())
        graph.add_edge(START, "asking")
        graph.add_edge("asking", END)
        return graph.compile(checkpointer=saver)
    graph.add_node("start", lambda state: {"out": "started"})
    graph.add_node("ask", _ask_twice)
    graph.add_edge(START, "start")
    graph.add_edge("start", END)
    return graph.compile(checkpointer=saver, interrupt_after=["start"])


async def answer_first(
    store: Store, graph: CompiledStateGraph[Any], shape: str, config: Any
) -> Any:
    """Bring the thread to its second question; return what the run gave back.

    LangGraph saves a run's pending writes from a pool of background threads, so under
    load the plain answer's write can land after the write of the task that took it.
    SQLite tells a stale answer by the order its rows were stored in, and such a thread
    holds, as stored, an answer no task has read: one worker (`max_concurrency`) keeps
    the writes in the order LangGraph made them, the order this thread is about."""
    drivable(store)
    config = {**config, "max_concurrency": 1}
    await store.invoke(graph, {"out": ""}, config)
    if shape == "goto":
        await store.invoke(graph, Command(goto="ask"), config)
        return await store.invoke(graph, Command(goto="ask", resume="yes"), config)
    return await store.invoke(graph, Command(resume="yes"), config)


async def seed_asking(store: Store) -> None:
    """One stale thread per shape, one waiting on its first question, one answered by id."""
    for shape in SHAPES:
        await answer_first(store, build(shape, store.saver), shape, thread(f"stale-{shape}"))
    graph = build("one_task", store.saver)
    await store.invoke(graph, {"out": ""}, thread("first-question"))
    first = (await store.invoke(graph, {"out": ""}, thread("by-id")))["__interrupt__"][0]
    await store.invoke(graph, Command(resume={first.id: "yes"}), thread("by-id"))


def asked(result: Any) -> list[Any]:
    """The questions a run stopped on."""
    return [found.value for found in result.get("__interrupt__", ())]


def thread(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}
