"""Shared pieces of the in-run tests: the cancel call on either API, and graph shapes."""

from __future__ import annotations

import warnings
from typing import Any, Literal

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import (
    CancelResult,
    acancel_pending_tool_calls,
    cancel_pending_tool_calls,
)
from tests.support.fakes import ProviderModel
from tests.support.stores import Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent


async def cancel(
    store: Store, graph: CompiledStateGraph[Any], config: Any, **kw: Any
) -> CancelResult:
    """`cancel_pending_tool_calls` on the store's API: sync or async."""
    if store.is_async:
        return await acancel_pending_tool_calls(graph, config, **kw)
    return cancel_pending_tool_calls(graph, config, **kw)


class Crash(BaseException):
    """What a killed worker looks like to the graph: no error is recorded."""


@tool
def crash(city: str) -> str:
    """Stop the worker in the middle of the tool."""
    raise Crash(city)


def crashing_agent(
    model: ProviderModel, saver: BaseCheckpointSaver[Any], version: Literal["v1", "v2"]
) -> CompiledStateGraph[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(model, [crash], checkpointer=saver, version=version)


def parent_of(agent: CompiledStateGraph[Any], saver: BaseCheckpointSaver[Any]) -> Any:
    """A parent graph whose only node is a whole agent, sharing the messages key."""
    builder = StateGraph(MessagesState)
    builder.add_node("assistant", agent)
    builder.add_edge(START, "assistant")
    builder.add_edge("assistant", END)
    return builder.compile(checkpointer=saver)


def tool_results(messages: list[BaseMessage]) -> dict[str, str]:
    """Call id -> the content of its result."""
    return {m.tool_call_id: str(m.content) for m in messages if isinstance(m, ToolMessage)}
