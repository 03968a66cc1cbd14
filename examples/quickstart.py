"""Brick a real thread, see the error, repair the history, run the thread again.

Runs on a SQLite file with a scripted chat model: no server, no API key.

    python examples/quickstart.py [path/to/quickstart.sqlite]
"""

from __future__ import annotations

import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Any

from fake_model import call, scripted
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent
from transcript import show

from langgraph_checkpoint_repair import PatchingCheckpointer, repair_messages

warnings.filterwarnings("ignore", category=DeprecationWarning)
CONFIG: Any = {"configurable": {"thread_id": "support-42"}}


def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"It is sunny in {city}."


def brick_a_thread(saver: SqliteSaver) -> None:
    """The model asks for a tool, the thread stops before it, the user moves on."""
    model = scripted(call("get_weather", "call_1", city="Paris"))
    graph = create_react_agent(model, [get_weather], checkpointer=saver, interrupt_before=["tools"])
    graph.invoke({"messages": [HumanMessage("Weather in Paris?")]}, CONFIG)
    print("The agent asked for get_weather and stopped before running it (interrupt).")
    for attempt in (1, 2):
        try:
            graph.invoke({"messages": [HumanMessage("Never mind, tell me a joke.")]}, CONFIG)
        except ValueError as error:
            code = "INVALID_CHAT_HISTORY" if "INVALID_CHAT_HISTORY" in str(error) else "error"
            print(f"Run {attempt} after the user changed the subject fails with {code}:")
            print(f"  {str(error).splitlines()[0][:100]}...")


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "quickstart.sqlite")
    path.unlink(missing_ok=True)
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    brick_a_thread(saver)

    stored = saver.get_tuple(CONFIG)
    assert stored is not None
    history = stored.checkpoint["channel_values"]["messages"]
    show("The stored history (the call has no result):", history)

    result = repair_messages(history)
    show("repair_messages(history).messages:", result.messages)
    print("\nActions:", [f"{a.kind} {a.tool_call_id}" for a in result.actions])

    run_through_the_wrapper(saver)
    print(f"\nThe thread lives in {path}.")


def run_through_the_wrapper(saver: SqliteSaver) -> None:
    """The one-line fix: the same graph, compiled on the wrapped saver."""
    wrapped = PatchingCheckpointer(saver)
    model = scripted("Why did the scarecrow win an award? He was outstanding in his field.")
    graph = create_react_agent(model, [get_weather], checkpointer=wrapped)
    out = graph.invoke({"messages": [HumanMessage("Are you still there?")]}, CONFIG)
    print("\nThrough PatchingCheckpointer(saver) the next run works:")
    print(f"  ai: {out['messages'][-1].content!r}")
    stored = saver.get_tuple(CONFIG)
    assert stored is not None
    kinds = [m.type for m in stored.checkpoint["channel_values"]["messages"]]
    print(f"The raw store now holds the repaired history too: {kinds}")


if __name__ == "__main__":
    main()
