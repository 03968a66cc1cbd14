"""A small research application as users lay one out, written into a folder for a test:
a src layout without `__init__.py` files, pydantic models in its state (nested), a
`langgraph.json` with `dependencies` and an `env` file (a key its state module reads
at import), and two releases. Release 1 asks a human to
approve a plan in `approve`; release 2 renamed that node `review`."""

from __future__ import annotations

import importlib
import json
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

KEY = "RESEARCH_API_KEY"
SECRET = "sk-research-3f9a"
"""The value its env file gives `KEY`, which no output may echo."""

STATE = """
import os
from typing import TypedDict

from pydantic import BaseModel


class Section(BaseModel):
    title: str


class Plan(BaseModel):
    sections: list[Section]


SEARCH_KEY = os.environ["RESEARCH_API_KEY"]  # read at import, as search clients do


class State(TypedDict, total=False):
    topic: str
    plan: Plan
    report: str
"""

GRAPH = """
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from {package}.agent.state import Plan, Section, State


{defined} plan(state):
    return {{"plan": Plan(sections=[Section(title=state["topic"])])}}


{defined} ask(state):
    answer = interrupt({{"approve": [s.title for s in state["plan"].sections]}})
    return {{"report": f"{{answer}}: " + ", ".join(s.title for s in state["plan"].sections)}}


def build(ask_node):
    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node(ask_node, ask)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", ask_node)
    builder.add_edge(ask_node, END)
    return builder


graph = build("{node}").compile()
"""


@dataclass(frozen=True)
class App:
    folder: Path
    package: str
    """Its top folder's name, a namespace package (unique per test)."""

    @property
    def config(self) -> Path:
        return self.folder / "langgraph.json"

    def release(self, number: int) -> ModuleType:
        """Release 1 or 2 of the graph module, imported as the application imports it,
        its key set for the import only (the commands a test runs find it in `env`)."""
        if str(self.folder) not in sys.path:
            sys.path.insert(0, str(self.folder))
        os.environ[KEY] = SECRET
        try:
            return importlib.import_module(f"{self.package}.agent.release_{number}")
        finally:
            del os.environ[KEY]

    def forget(self) -> None:
        """Out of this process: its modules and its folder on the path."""
        for name in [n for n in sys.modules if n.split(".")[0] == self.package]:
            del sys.modules[name]
        if str(self.folder) in sys.path:
            sys.path.remove(str(self.folder))


def write_app(folder: Path, asynchronous: bool = True) -> App:
    """The application in `folder`; `langgraph.json` names release 2 as graph `agent`.
    Its nodes are `async def` unless `asynchronous` is false (Python 3.10, where
    LangGraph cannot run `interrupt()` in a node driven by `ainvoke`)."""
    defined = "async def" if asynchronous else "def"
    package = f"src_{uuid.uuid4().hex[:8]}"
    agent = folder / package / "agent"
    agent.mkdir(parents=True)
    (agent / "state.py").write_text(STATE)
    for number, node in ((1, "approve"), (2, "review")):
        text = GRAPH.format(package=package, node=node, defined=defined)
        (agent / f"release_{number}.py").write_text(text)
    config: dict[str, Any] = {
        "dependencies": ["."],
        "graphs": {"agent": f"./{package}/agent/release_2.py:graph"},
    }
    (folder / ".env").write_text(f"# keys\nexport {KEY}='{SECRET}'\n")
    config["env"] = ".env"
    (folder / "langgraph.json").write_text(json.dumps(config))
    return App(folder, package)
