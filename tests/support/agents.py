"""Real LangGraph agents and graphs for the integration tests: tools that count their runs,
and a one-node chat graph."""

from __future__ import annotations

import time
import uuid
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from langgraph_checkpoint_repair import is_synthetic
from tests.support.fakes import ProviderModel

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent


class ToolBox:
    """Tools for the agents; `runs` counts completed executions per tool."""

    def __init__(self, fail_after: Callable[[], bool] | None = None) -> None:
        self.runs: Counter[str] = Counter()
        self.failures_left = 1
        self.fail_after = fail_after
        """Whether the sibling `flaky` lets finish before it fails is saved (`result_saved`)."""

    @property
    def all(self) -> list[BaseTool]:
        runs = self.runs

        @tool
        def get_weather(city: str) -> str:
            """Return the weather for a city."""
            runs["get_weather"] += 1
            return f"sunny in {city}"

        @tool
        def ask_human(city: str) -> str:
            """Ask a human to approve, then answer."""
            answer = interrupt(f"approve {city}?")
            runs["ask_human"] += 1
            return f"human said {answer}"

        @tool
        def flaky(city: str) -> str:
            """Fail the first time, then work."""
            if self.failures_left:
                self.failures_left -= 1
                self.wait_for_sibling()
                raise RuntimeError("tool crashed")
            runs["flaky"] += 1
            return f"flaky ok for {city}"

        return [get_weather, ask_human, flaky]

    def wait_for_sibling(self) -> None:
        """Parallel tools race; a test about a finished sibling needs its result saved
        before the failure cancels the step: waited for in the store itself, so the
        outcome never depends on how busy the machine is."""
        if self.fail_after is None:
            return
        deadline = time.monotonic() + 60
        while not self.fail_after() and time.monotonic() < deadline:
            time.sleep(0.01)


def result_saved(saver: BaseCheckpointSaver[Any], config: Any, call_id: str) -> Callable[[], bool]:
    """Whether the thread's head holds a pending write answering `call_id` (a tool task
    that finished, its result saved), read through the saver's sync API from any thread."""

    def saved() -> bool:
        head = saver.get_tuple(config)
        writes = (head.pending_writes or []) if head is not None else []
        values = [
            v for _, _, value in writes for v in (value if isinstance(value, list) else [value])
        ]
        return any(isinstance(v, ToolMessage) and v.tool_call_id == call_id for v in values)

    return saved


def thread() -> Any:
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}


def react_agent(
    model: ProviderModel,
    box: ToolBox,
    saver: BaseCheckpointSaver[Any] | None,
    *,
    version: Literal["v1", "v2"] = "v2",
    interrupt_before: list[str] | None = None,
    raise_tool_errors: bool = False,
) -> CompiledStateGraph[Any]:
    tools: Any = ToolNode(box.all, handle_tool_errors=False) if raise_tool_errors else box.all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(
            model,
            tools,
            checkpointer=saver,
            version=version,
            interrupt_before=interrupt_before,
        )


def custom_agent(
    model: ProviderModel, box: ToolBox, saver: BaseCheckpointSaver[Any] | None
) -> CompiledStateGraph[Any]:
    """A hand-built agent without the prebuilt history check: the provider sees everything."""

    def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("think", think)
    builder.add_node("act", ToolNode(box.all))
    builder.add_edge(START, "think")
    builder.add_conditional_edges("think", tools_condition, {"tools": "act", END: END})
    builder.add_edge("act", "think")
    return builder.compile(checkpointer=saver, interrupt_before=["act"])


def results_per_call(messages: list[BaseMessage]) -> Counter[str]:
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


def synthetic_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage) and is_synthetic(m)]


def chat_graph(saver: Any) -> CompiledStateGraph[Any]:
    """A one-node chat graph: after an update as "chat", nothing is scheduled."""
    builder = StateGraph(MessagesState)
    builder.add_node("chat", lambda state: {"messages": [AIMessage("hi")]})
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)
