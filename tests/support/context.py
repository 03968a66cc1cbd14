"""Long histories for the context-overflow tests: a deep agent's single task of many
`read_file` steps, and the counter a provider would hold them to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langgraph_checkpoint_repair import RepairPolicy
from langgraph_checkpoint_repair.engine import MARKER_KEY
from tests.support.fakes import ProviderRejected, window_model
from tests.support.seeding import config
from tests.support.stores import Store


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


WINDOW = 3000
"""The window of the model in the thread tests: a few reads overflow it."""
TOO_LONG = "prompt is too long: .* tokens > 3000 maximum"
RESULT_CHARS = 2000
"""What one `read_file` returns: about 500 tokens."""


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"# {path}\n" + "x" * RESULT_CHARS


def reading_turns(steps: int, start: int = 0) -> list[AIMessage]:
    """A model's replies for a long single task: `steps` reads, one a turn."""
    return [
        AIMessage(
            "", tool_calls=[{"name": "read_file", "args": {"path": f"f{n}.py"}, "id": f"r{n}"}]
        )
        for n in range(start, start + steps)
    ]


def reading_agent(model: Any, saver: BaseCheckpointSaver[Any] | None) -> CompiledStateGraph[Any]:
    """A model node and a tool node over a plain `messages` list."""

    def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("think", think)
    builder.add_node("act", ToolNode([read_file]))
    builder.add_edge(START, "think")
    builder.add_conditional_edges("think", tools_condition, {"tools": "act", END: END})
    builder.add_edge("act", "think")
    return builder.compile(checkpointer=saver)


async def overflow(store: Store, thread_id: str) -> None:
    """A long single task of reads until the prompt no longer fits, then a second run
    that fails the same way."""
    agent = reading_agent(window_model(WINDOW, *reading_turns(20)), store.saver)
    task = {"messages": [HumanMessage("Read the whole repository.")]}
    with pytest.raises(ProviderRejected, match=TOO_LONG):
        await store.invoke(agent, task, config(thread_id))
    again = reading_agent(window_model(WINDOW, "Done."), store.saver)
    with pytest.raises(ProviderRejected, match=TOO_LONG):
        await store.invoke(again, {"messages": [HumanMessage("Go on.")]}, config(thread_id))


POLICY = RepairPolicy(max_input_tokens=WINDOW)
"""The budget of the model's window, as the wrapper and the batch job are given it."""


def as_dicts(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [m.model_dump() for m in messages]


WINDOW_200K = RepairPolicy(max_input_tokens=200_000, context_reserve=20_000)
LOG = "error: linker failed on libbuild.so (see above)\n" * 21_000
"""A pasted build log of about 1 MB: some 250,000 tokens, more than the budget alone."""
ANSWER = "The build fails at the link step: libbuild.so is missing."


async def paste_the_log(store: Store, thread_id: str) -> None:
    """A model with a larger window answered the log; the budget is now 200,000."""
    model = window_model(400_000, ANSWER)
    agent = reading_agent(model, store.saver)
    await store.invoke(agent, {"messages": [HumanMessage(LOG)]}, config(thread_id))
