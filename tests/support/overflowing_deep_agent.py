"""A real deep agent whose long single task overflows the model's window, on SQLite and
PostgreSQL: every run fails with the provider's words until the thread is repaired."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deepagents import create_deep_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

from tests.support.context import read_file, reading_turns
from tests.support.fakes import ProviderRejected, WindowModel, window_model
from tests.support.seeding import config

WINDOW = 3000
TOO_LONG = "prompt is too long: .* tokens > 3000 maximum"
THREAD = "deep-task"


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    """A plain saver over a real store, and the TARGET the command line names it by."""
    if request.param == "sqlite":
        path = tmp_path / "threads.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            yield saver, f"sqlite:///{path}"
    else:
        uri = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
            yield saver, uri


def deep_agent(model: WindowModel, saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    graph: CompiledStateGraph[Any] = create_deep_agent(
        model=model, tools=[read_file], checkpointer=saver
    )
    return graph


def history(saver: BaseCheckpointSaver[Any]) -> list[BaseMessage]:
    """The head's history as LangGraph rebuilds it with the plain saver."""
    state = deep_agent(window_model(WINDOW), saver).get_state(config(THREAD))
    return list(state.values["messages"])


def overflow(saver: BaseCheckpointSaver[Any]) -> None:
    agent = deep_agent(window_model(WINDOW, *reading_turns(20)), saver)
    with pytest.raises(ProviderRejected, match=TOO_LONG):
        agent.invoke({"messages": [HumanMessage("Read the whole repository.")]}, config(THREAD))
    for attempt in ("Go on.", "Please go on."):  # every later run fails the same way
        again = deep_agent(window_model(WINDOW, "Done."), saver)
        with pytest.raises(ProviderRejected, match=TOO_LONG):
            again.invoke({"messages": [HumanMessage(attempt)]}, config(THREAD))


def finish(saver: BaseCheckpointSaver[Any]) -> WindowModel:
    """One more turn; returns the model, which saw the history sent."""
    model = window_model(WINDOW, "Done.")
    out = deep_agent(model, saver).invoke({"messages": [HumanMessage("Finish.")]}, config(THREAD))
    assert out["messages"][-1].content == "Done."
    return model
