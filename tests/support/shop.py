"""A class stored under a module that is later removed: the old `Order` and its new home."""

from __future__ import annotations

import contextlib
import importlib
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair.decoding.finders import module_findable

ORDER_CLASS = """\
from dataclasses import dataclass


@dataclass
class Order:
    id: str
    total: int
"""
ORDER = {"id": "o-1", "total": 3}


class OrderState(TypedDict, total=False):
    order: Any


@dataclass
class Shop:
    """Two modules on sys.path holding the same `Order` class: the old one is where the
    stored bytes name it, until `forget_old` deletes it."""

    folder: Path
    old: ModuleType
    new_name: str

    @property
    def old_type(self) -> str:
        return f"{self.old.__name__}:Order"

    @property
    def new_type(self) -> str:
        return f"{self.new_name}:Order"

    def forget_old(self) -> None:
        (self.folder / f"{self.old.__name__}.py").unlink()
        sys.modules.pop(self.old.__name__, None)
        importlib.invalidate_caches()
        module_findable.cache_clear()


@contextlib.contextmanager
def shop_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shop]:
    """The old and the new module written under tmp_path, on sys.path for the test."""
    tag = uuid.uuid4().hex[:8]
    folder = tmp_path / "modules"
    folder.mkdir()
    for name in (f"shop_old_{tag}", f"shop_new_{tag}"):
        (folder / f"{name}.py").write_text(ORDER_CLASS)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    old = importlib.import_module(f"shop_old_{tag}")
    yield Shop(folder, old, f"shop_new_{tag}")
    for name in (f"shop_old_{tag}", f"shop_new_{tag}"):
        sys.modules.pop(name, None)
    module_findable.cache_clear()


def order_graph(saver: BaseCheckpointSaver[Any], order: Any) -> CompiledStateGraph[Any]:
    builder = StateGraph(OrderState)
    builder.add_node("place", lambda state: {"order": order})
    builder.add_edge(START, "place")
    builder.add_edge("place", END)
    return builder.compile(checkpointer=saver)
