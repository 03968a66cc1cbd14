"""A graph that keeps a bytes payload in a delta channel of its own, beside delta
messages, as a coding agent keeps its workspace: every turn replaces the payload (last
value wins), and no snapshot is due for fifty updates. It can ask a human each turn."""

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from collections.abc import Sequence
from typing import Annotated, Any

from deepagents._messages_reducer import _messages_delta_reducer
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from tests.support.stores import Store

PAYLOAD_SIZE = 48 * 1024


def last_value(state: bytes, writes: Sequence[bytes]) -> bytes:
    """The application's reducer: the newest payload written wins."""
    return writes[-1] if writes else state


class PayloadState(TypedDict):
    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=50)
    ]
    payload: Annotated[bytes, DeltaChannel(last_value, snapshot_frequency=50)]


def payload_for(turn: int) -> bytes:
    """A workspace's bytes after `turn` turns: different every turn, not all printable."""
    return (f"turn {turn}:".encode() + bytes(range(256))) * (PAYLOAD_SIZE // 264)


def builder(asking: bool = False) -> StateGraph[Any]:
    """`work` replies and replaces the payload; with `asking`, `ask` then waits on a human."""

    def work(state: Any) -> dict[str, Any]:
        turn = len(state["messages"])
        return {"messages": [AIMessage(f"worked {turn}")], "payload": payload_for(turn)}

    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"approved: {interrupt('approve?')}")]}

    graph = StateGraph(PayloadState)
    graph.add_node("work", work)
    graph.add_edge(START, "work")
    if asking:
        graph.add_node("ask", ask)
        graph.add_edge("work", "ask")
        graph.add_edge("ask", END)
    else:
        graph.add_edge("work", END)
    return graph


def payload_graph(saver: Any, asking: bool = False) -> CompiledStateGraph[Any]:
    return builder(asking).compile(checkpointer=saver)


def graph() -> CompiledStateGraph[Any]:
    """The graph as `--graph tests.support.payload_graph:graph` loads it."""
    return builder().compile()


async def worked(
    store: Store, thread_id: str, turns: int, asking: bool = False
) -> CompiledStateGraph[Any]:
    """A thread of `turns` turns (each answered but the last, when `asking`)."""
    app = payload_graph(store.saver, asking)
    config = {"configurable": {"thread_id": thread_id}}
    for turn in range(turns):
        await store.invoke(app, {"messages": [HumanMessage(f"turn {turn}")]}, config)
        if asking and turn < turns - 1:
            await store.invoke(app, Command(resume=f"yes {turn}"), config)
    return app
