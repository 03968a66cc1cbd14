"""Resume interrupted threads safely: cancel pending tool calls, or reject some of them.

1. The agent stops before its tools; the user changes the subject. Sending the
   new message straight away would fail, so the application cancels the
   pending call first, then continues the thread.
2. A reviewer sees two pending calls, rejects one and approves the other.

Runs on a SQLite file with a scripted chat model: no server, no API key.

    python examples/safe_resume.py [path/to/safe_resume.sqlite]
"""

from __future__ import annotations

import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Any

from fake_model import call, scripted
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent
from transcript import show

from langgraph_checkpoint_repair import cancel_pending_tool_calls

warnings.filterwarnings("ignore", category=DeprecationWarning)


def get_weather(city: str) -> str:
    """Return the weather for a city."""
    print(f"  (tool ran: get_weather {city})")
    return f"It is sunny in {city}."


def send_email(to: str) -> str:
    """Send an email."""
    print(f"  (tool ran: send_email {to})")
    return f"Email sent to {to}."


TOOLS = [get_weather, send_email]


def change_of_mind(saver: SqliteSaver) -> None:
    """Interrupted before the tools, the user moves on: cancel, then continue."""
    config: Any = {"configurable": {"thread_id": "support-7"}}
    model = scripted(
        call("get_weather", "call_1", city="Paris"),
        "Why do cows wear bells? Their horns do not work.",
    )
    graph = create_react_agent(model, TOOLS, checkpointer=saver, interrupt_before=["tools"])
    graph.invoke({"messages": [HumanMessage("Weather in Paris?")]}, config)
    print("The agent asked for get_weather and stopped before running it (interrupt).")

    done = cancel_pending_tool_calls(graph, config, reason="the user changed the subject")
    print("The user changed the subject: cancel_pending_tool_calls(graph, config, reason=...)")
    print("Cancelled:", [f"{a.kind} {a.tool_call_id}" for a in done.actions])

    out = graph.invoke({"messages": [HumanMessage("Never mind, tell me a joke.")]}, config)
    show("The new message runs on the first try:", out["messages"], width=120)


def reject_one_call(saver: SqliteSaver) -> None:
    """A reviewer rejects send_email and approves get_weather; then the thread resumes."""
    config: Any = {"configurable": {"thread_id": "review-3"}}
    both = AIMessage(
        "",
        tool_calls=[
            {"name": "send_email", "args": {"to": "boss@example.com"}, "id": "call_2"},
            {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_3"},
        ],
    )
    model = scripted(both, "I did not send the email; Oslo is sunny.")
    graph = create_react_agent(model, TOOLS, checkpointer=saver, interrupt_before=["tools"])
    graph.invoke({"messages": [HumanMessage("Email my boss, and the weather in Oslo?")]}, config)
    print("\nThe agent asked for send_email and get_weather and waits for review.")

    done = cancel_pending_tool_calls(
        graph, config, tool_call_ids=["call_2"], reason="the reviewer rejected it"
    )
    print(f"Rejected {list(done.tool_call_ids)}; still to run: {list(done.kept)}")
    print("Resuming:")
    out = graph.invoke(None, config)
    show(
        "Each call has exactly one result; only the approved tool ran:", out["messages"], width=120
    )


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "safe_resume.sqlite")
    path.unlink(missing_ok=True)
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    change_of_mind(saver)
    reject_one_call(saver)
    print(f"\nThe threads live in {path}.")


if __name__ == "__main__":
    main()
