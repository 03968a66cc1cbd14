"""A chat application over a delta `messages` channel that regenerates an answer, run
as a child process by any LangGraph release with delta channels (it imports nothing of
ours), so a fork one release stored can be read by another over the same store.

    python regenerate_app.py STORE THREAD build       four turns, the last answer
                                                      regenerated, then three turns
    python regenerate_app.py STORE THREAD turn TEXT   one more turn
    python regenerate_app.py STORE THREAD read

STORE is a SQLite file or a PostgreSQL URI. Prints one JSON line: the thread's message
texts as this release reads them.
"""

from __future__ import annotations

import json
import sys
from itertools import count
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer
from two_questions import saver  # type: ignore[import-not-found]  # beside this file
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=3)
    ]


def graph(checkpointer: Any) -> Any:
    answers = count(1)

    def chat(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"answer {next(answers)}")]}

    builder = StateGraph(State)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=checkpointer)


def say(app: Any, config: Any, text: str) -> None:
    app.invoke({"messages": [HumanMessage(text)]}, config)


def main(store: str, thread: str, command: str, *args: str) -> list[Any]:
    config: Any = {"configurable": {"thread_id": thread}}
    with saver(store) as checkpointer:
        app = graph(checkpointer)
        if command == "build":
            for text in ("Hi", "Hello", "Hey", "Again?"):  # no snapshot before the answer
                say(app, config, text)
            before_answer = next(s for s in app.get_state_history(config) if s.next == ("chat",))
            app.invoke(None, before_answer.config)  # regenerate the last answer
            for text in ("More", "And more", "Last"):
                say(app, config, text)
        elif command == "turn":
            say(app, config, args[0])
        return [m.content for m in app.get_state(config).values["messages"]]


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
