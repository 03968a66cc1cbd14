"""Real threads bricked for Claude by an unsigned thinking block (a stream cut mid-thought,
persisted): a one-node chat graph, a SQLite saver, and the bricked history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import RepairPolicy
from tests.support.agents import thread
from tests.support.claude_model import ClaudeLikeModel, claude, reply

ANTHROPIC = RepairPolicy(provider="anthropic")
SIGNED = "claude:EqQBCkYIAxgCKkA"


def chat_graph(model: ClaudeLikeModel, saver: Any) -> CompiledStateGraph[Any]:
    """One model node: the whole history goes to the model on every turn."""

    def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as sqlite:
        yield sqlite


def brick(saver: SqliteSaver) -> Any:
    """Two turns: a signed reply, then one whose stream was cut mid-thought and stored."""
    config = thread()
    model = claude(
        reply("Sunny in Paris.", signature=SIGNED), reply("Rain in Oslo.", signature=None)
    )
    graph = chat_graph(model, saver)
    graph.invoke({"messages": [HumanMessage("Weather in Paris?", id="h1")]}, config)
    graph.invoke({"messages": [HumanMessage("And Oslo?", id="h2")]}, config)
    return config


def ask(saver: Any, config: Any, model: ClaudeLikeModel) -> dict[str, Any]:
    return chat_graph(model, saver).invoke({"messages": [HumanMessage("Thanks!", id="h3")]}, config)


def bricked_history() -> list[BaseMessage]:
    return [
        HumanMessage("Weather in Oslo?", id="h1"),
        reply("Rain in Oslo.", signature=None),
    ]
