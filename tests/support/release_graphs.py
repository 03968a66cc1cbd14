"""One application in two releases: release 2 renamed a node or dropped a state key.

Each shape pauses a thread under release 1 the way users' threads wait over a deploy:
an `interrupt()` inside a node, a compiled `interrupt_before` pause, pending `Send`s
to workers, and a state key release 2 no longer has on a graph with compiled
interrupts. The module is also a `--graph` target (`release_2_*` attributes).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send, interrupt

QUESTION = {"question": "ship it?"}


class State(TypedDict, total=False):
    topic: str
    answer: str
    extra: str
    log: Annotated[list[str], operator.add]


class SlimState(TypedDict, total=False):
    """Release 2 of `State`: `extra` is gone."""

    topic: str
    answer: str
    log: Annotated[list[str], operator.add]


def _ask(state: Any) -> dict[str, Any]:
    return {"answer": interrupt(QUESTION)}


def _after(state: Any) -> dict[str, Any]:
    return {"log": [f"after {state.get('answer')}"]}


def _plan(state: Any) -> dict[str, Any]:
    return {"log": ["planned"], "extra": "kept"}


def _plan_slim(state: Any) -> dict[str, Any]:
    return {"log": ["planned"]}


def _act(state: Any) -> dict[str, Any]:
    return {"log": ["acted"]}


def _fan(state: Any) -> dict[str, Any]:
    return {"log": ["fanned"]}


def _work(item: Any) -> dict[str, Any]:
    return {"log": [f"worked {item['n']}"]}


def asking(ask: str = "ask", asks: Any = _ask, state: type = State) -> StateGraph[Any]:
    """`ask` asks a human (`asks`: how), then `after` logs the answer."""
    graph: StateGraph[Any] = StateGraph(state)
    graph.add_node(ask, asks)
    graph.add_node("after", _after)
    graph.add_edge(START, ask)
    graph.add_edge(ask, "after")
    graph.add_edge("after", END)
    return graph


def pausing(act: str = "act", state: type = State) -> StateGraph[Any]:
    """`plan`, then `act`: compiled with `interrupt_before=[act]` (see `compiled`)."""
    graph: StateGraph[Any] = StateGraph(state)
    graph.add_node("plan", _plan if state is State else _plan_slim)
    graph.add_node(act, _act)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", act)
    graph.add_edge(act, END)
    return graph


def fanning(work: str = "work") -> StateGraph[Any]:
    """`fan` sends two items to `work`: compiled with `interrupt_after=["fan"]`."""
    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("fan", _fan)
    graph.add_node(work, _work)  # type: ignore[arg-type]  # a Send carries its own input
    graph.add_edge(START, "fan")
    graph.add_conditional_edges("fan", lambda s: [Send(work, {"n": n}) for n in (1, 2)], [work])
    graph.add_edge(work, END)
    return graph


def compiled(shape: str, release: int, checkpointer: Any = None) -> Any:
    """Release 1 or 2 of a shape, compiled as the application compiles it."""
    if shape == "interrupt":
        return asking("ask" if release == 1 else "ask2").compile(checkpointer=checkpointer)
    if shape == "pause":
        act = "act" if release == 1 else "act2"
        return pausing(act).compile(checkpointer=checkpointer, interrupt_before=[act])
    if shape == "sends":
        work = "work" if release == 1 else "work2"
        return fanning(work).compile(checkpointer=checkpointer, interrupt_after=["fan"])
    state = State if release == 1 else SlimState
    return pausing("act", state).compile(checkpointer=checkpointer, interrupt_before=["act"])


def _ask_twice(state: Any) -> dict[str, Any]:
    first, second = interrupt("first?"), interrupt("second?")
    return {"answer": f"{first}+{second}"}


def asking_twice(ask: str = "ask") -> StateGraph[Any]:
    """`ask` asks two questions in one task; `after` logs the answers."""
    return asking(ask, _ask_twice)


def nesting(review: str = "review") -> StateGraph[Any]:
    """`review` runs a subgraph whose `ask` asks a human; `after` logs the answer."""
    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node(review, asking("ask").compile())
    graph.add_node("after", _after)
    graph.add_edge(START, review)
    graph.add_edge(review, "after")
    return graph


RENAMES = {"interrupt": {"ask": "ask2"}, "pause": {"act": "act2"}, "sends": {"work": "work2"}}
"""What release 2 renamed, by shape (the removed key needs no rename)."""

release_1_asking = asking().compile()
"""The release before the rename, as another graph of the store still runs it."""
release_2_asking_builder = asking("ask2")
release_2_asking = asking("ask2").compile()


def release_2_asking_factory() -> Any:
    return asking("ask2").compile()


release_2_pausing = compiled("pause", 2)
release_2_slim_asking = asking(state=SlimState).compile()
"""Release 2 dropped `extra`, on a graph without compiled interrupts: a stored `extra`
is never read again (`channel_ignored`), and nothing is stranded."""
