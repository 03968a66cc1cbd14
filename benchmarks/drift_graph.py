"""The application `bench_drift.py` seeds threads of, in two releases: its router sends a
thread to `ask` (release 1; release 2 renamed it `ask2`) or to `keep`, and both ask a
human. Its own module, so that `scan --graph` imports the graph and LangGraph only."""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt


def _ask(state: MessagesState) -> dict[str, Any]:
    return {"messages": [("ai", str(interrupt("approve the refund?")))]}


def release(ask: str) -> Any:
    """The application, its node `ask` named as the release names it."""
    graph: StateGraph[Any] = StateGraph(MessagesState)
    graph.add_node(ask, _ask)
    graph.add_node("keep", _ask)

    def route(state: MessagesState) -> str:
        return ask if state["messages"][-1].content == "renamed" else "keep"

    graph.add_conditional_edges(START, route, [ask, "keep"])
    return graph.compile()


release_two = release("ask2")
"""The graph `scan --graph` checks the store against."""

release_one = release("ask")
