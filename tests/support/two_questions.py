"""An application whose node asks a human two questions, run as a child process by any
LangGraph release (it imports nothing of ours), so a thread paused by one release can be
answered by another over the same store.

    python two_questions.py STORE THREAD start [--at-once]
    python two_questions.py STORE THREAD answer VALUE [ID] [--strict] [--at-once]
    python two_questions.py STORE THREAD state [--at-once]

STORE is a SQLite file or a PostgreSQL URI. `--at-once` runs the node that asks both
questions in one go. Prints one JSON line: the pending questions (`id`, `value`), the
node's result (`out`) once it ended, and the metadata keys it tags its runs with as the
head holds them (`tags`); or the error a resume raised (`error`, `reason`).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypedDict

from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict, total=False):
    out: str


def ask_in_turn(state: State) -> State:
    first = interrupt("q1")
    second = interrupt("q2")
    return {"out": f"q1 got {first!r}, q2 got {second!r}"}


def ask_at_once(state: State) -> State:
    """Both questions raised together (one write, LangGraph gives them one id)."""
    asked: list[Any] = []
    answers = []
    for question in ("q1", "q2"):
        try:
            answers.append(interrupt(question))
        except GraphInterrupt as raised:
            asked.extend(raised.args[0])
    if asked:
        raise GraphInterrupt(tuple(asked))
    return {"out": "answers " + ", ".join(map(repr, answers))}


def graph(checkpointer: Any, at_once: bool) -> Any:
    builder = StateGraph(State)
    builder.add_node("ask", ask_at_once if at_once else ask_in_turn)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=checkpointer)


@contextmanager
def saver(store: str) -> Iterator[Any]:
    if store.startswith("postgresql://"):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(store) as postgres:
            postgres.setup()
            yield postgres
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(store, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


TAGS = {"graph_id": "two_questions", "workspace_id": "ws-1"}
"""What the application tags its runs with: every checkpoint carries it."""


def pending(app: Any, config: Any) -> list[dict[str, Any]]:
    return [{"id": i.id, "value": i.value} for i in app.get_state(config).interrupts]


def main(store: str, thread: str, command: str, *args: str) -> dict[str, Any]:
    at_once, strict = "--at-once" in args, "--strict" in args
    args = tuple(arg for arg in args if not arg.startswith("--"))
    config: Any = {"configurable": {"thread_id": thread}, "metadata": dict(TAGS)}
    if strict:
        config["configurable"]["__pregel_strict_resume"] = True
    with saver(store) as checkpointer:
        app = graph(checkpointer, at_once)
        if command == "start":
            app.invoke({}, config)
        elif command == "answer":
            value, *named = args
            resume = {named[0]: value} if named else value
            try:
                app.invoke(Command(resume=resume), config)
            except Exception as error:  # what the release raises is the result
                return {"error": type(error).__name__, "reason": getattr(error, "reason", None)}
        state = app.get_state(config)
        tags = {key: state.metadata.get(key) for key in TAGS} if state.metadata else {}
        return {"interrupts": pending(app, config), "out": state.values.get("out"), "tags": tags}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
