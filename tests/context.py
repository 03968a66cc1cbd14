"""Long histories for the context-overflow tests: a deep agent's single task of many
`read_file` steps, and the counter a provider would hold them to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_checkpoint_repair.engine import MARKER_KEY


def read_step(n: int, size: int = 400) -> list[BaseMessage]:
    """One `read_file` call and its result of `size` characters."""
    call: Any = {"name": "read_file", "args": {"path": f"f{n}.py"}, "id": f"call_{n}"}
    return [
        AIMessage("", id=f"a{n}", tool_calls=[call]),
        ToolMessage("x" * size, tool_call_id=f"call_{n}", name="read_file", id=f"t{n}"),
    ]


def long_task(steps: int, size: int = 400, system: bool = True) -> list[BaseMessage]:
    """A system prompt, one human task, then `steps` read steps."""
    history: list[BaseMessage] = [SystemMessage("You are a coder.", id="s")] if system else []
    history.append(HumanMessage("Refactor the whole repository.", id="task"))
    for n in range(steps):
        history.extend(read_step(n, size))
    return history


def tokens(messages: Sequence[BaseMessage]) -> int:
    return count_tokens_approximately(messages)


def markers(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if MARKER_KEY in m.additional_kwargs]
