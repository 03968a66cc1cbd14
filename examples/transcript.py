"""Print a conversation the way the examples show it."""

from __future__ import annotations

from langchain_core.messages import BaseMessage


def show(title: str, messages: list[BaseMessage], width: int = 60) -> None:
    """One line per message: its type, the start of its content, the calls it makes or answers."""
    print(f"\n{title}")
    for message in messages:
        calls = [c["id"] for c in getattr(message, "tool_calls", [])]
        answers = getattr(message, "tool_call_id", None)
        note = f" calls {calls}" if calls else f" answers {answers}" if answers else ""
        print(f"  {message.type:>5}: {str(message.content)[:width]!r}{note}")
