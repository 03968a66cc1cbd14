"""Threads that wait on a human, and LangGraph's own account of what they wait on.

`seed_waiting` writes, through real graphs:

- `stale-<shape>`: the three shapes brought to their second question;
- `first-question`: a thread waiting on its first question;
- `fan-out`: three `Send` tasks each asking (three open interrupts on one head);
- `a-dict`: a question asked with a dict (its value goes into JSON whole);
- `answered`: a thread whose questions were both answered (it waits on nobody).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Send, interrupt

from tests.support.asking_graphs import SHAPES, answer_first, build, drivable, thread
from tests.support.stores import Store

WAITING = {*(f"stale-{shape}" for shape in SHAPES), "first-question", "fan-out", "a-dict"}
DICT_QUESTION = {"action": "refund", "amount": 120.5, "lines": ["a", "b"]}


class Fan(TypedDict):
    got: Annotated[list[Any], operator.add]


def _fan_out(state: Fan) -> list[Send]:
    return [Send("check", {"got": [n]}) for n in range(3)]


def _check(state: Fan) -> dict[str, list[Any]]:
    return {"got": [interrupt(f"is item {state['got'][0]} in stock?")]}


def fan_out_graph(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    graph = StateGraph(Fan)
    graph.add_node("check", _check)
    graph.add_conditional_edges(START, _fan_out, ["check"])
    graph.add_edge("check", END)
    return graph.compile(checkpointer=saver)


class Asked(TypedDict):
    out: str


def dict_graph(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    graph = StateGraph(Asked)
    graph.add_node("review", lambda state: {"out": str(interrupt(DICT_QUESTION))})
    graph.add_edge(START, "review")
    graph.add_edge("review", END)
    return graph.compile(checkpointer=saver)


async def seed_waiting(store: Store) -> None:
    drivable(store)
    for shape in SHAPES:
        await answer_first(store, build(shape, store.saver), shape, thread(f"stale-{shape}"))
    asking = build("one_task", store.saver)
    await store.invoke(asking, {"out": ""}, thread("first-question"))
    await store.invoke(fan_out_graph(store.saver), {"got": []}, thread("fan-out"))
    await store.invoke(dict_graph(store.saver), {"out": ""}, thread("a-dict"))
    first = (await store.invoke(asking, {"out": ""}, thread("answered")))["__interrupt__"][0]
    second = await store.invoke(asking, Command(resume={first.id: "yes"}), thread("answered"))
    await store.invoke(
        asking, Command(resume={second["__interrupt__"][0].id: "sure"}), thread("answered")
    )


NODES = {
    "stale-one_task": {"ask"},
    "stale-subgraph": {"asking"},
    "stale-goto": {"ask"},
    "first-question": {"ask"},
    "fan-out": {"check"},
    "a-dict": {"review"},
}
"""The node of each thread's open question. LangGraph's `get_state` names the same
task, except for the `goto` shape, whose node is reached through a pending write
that `get_state` does not apply."""


async def langgraph_interrupts(store: Store) -> dict[str, list[tuple[str, Any]]]:
    """Each waiting thread's open interrupts as LangGraph's `get_state` gives them (ids and
    values, sorted), for the threads where it gives them."""
    graphs = {
        "stale-one_task": build("one_task", store.saver),
        "stale-subgraph": build("subgraph", store.saver),
        "first-question": build("one_task", store.saver),
        "fan-out": fan_out_graph(store.saver),
        "a-dict": dict_graph(store.saver),
    }
    found: dict[str, list[tuple[str, Any]]] = {}
    for thread_id, graph in graphs.items():
        state = await store.get_state(graph, thread(thread_id))
        found[thread_id] = sorted(
            ((i.id, i.value) for task in state.tasks for i in task.interrupts), key=str
        )
        assert {task.name for task in state.tasks if task.interrupts} == NODES[thread_id]
    return found
