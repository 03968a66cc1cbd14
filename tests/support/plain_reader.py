"""A reader that keeps `messages` as a plain channel, as an application's graph did
before delta channels, run as a child process by an older LangGraph: it prints what
the thread's newest checkpoint hands it, as JSON (message ids, or the type it got),
after running one turn of its chat node on it with `--turn`.

Usage: python plain_reader.py (SQLITE_PATH | postgresql://...) THREAD_ID [--turn]
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
from collections.abc import Iterator
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def chat(state: PlainState) -> dict[str, Any]:
    return {"messages": [AIMessage("hi")]}


@contextlib.contextmanager
def opened(target: str) -> Iterator[BaseCheckpointSaver[Any]]:
    if not target.startswith("postgresql://"):
        yield SqliteSaver(sqlite3.connect(target, check_same_thread=False))
        return
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(target) as saver:
        yield saver


def main(target: str, thread_id: str, turn: bool) -> None:
    builder = StateGraph(PlainState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    config: Any = {"configurable": {"thread_id": thread_id}}
    with opened(target) as saver:
        graph = builder.compile(checkpointer=saver)
        if turn:
            graph.invoke({"messages": [HumanMessage("older", id="h-older")]}, config)
        values = graph.get_state(config).values
    read = values.get("messages", [])
    shown = [m.id for m in read] if isinstance(read, list) else type(read).__name__
    print(json.dumps({"messages": shown}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--turn" in sys.argv[3:])
