"""One face for sync and async savers, so each scenario runs against all six."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot


@dataclass
class Store:
    """A real saver and whether to drive it through the sync or the async API."""

    saver: BaseCheckpointSaver[Any]
    is_async: bool

    async def invoke(self, graph: CompiledStateGraph[Any], value: Any, config: Any) -> Any:
        if self.is_async:
            return await graph.ainvoke(value, config)
        return graph.invoke(value, config)

    async def get_state(
        self, graph: CompiledStateGraph[Any], config: Any, subgraphs: bool = False
    ) -> StateSnapshot:
        if self.is_async:
            return await graph.aget_state(config, subgraphs=subgraphs)
        return graph.get_state(config, subgraphs=subgraphs)

    async def update_state(
        self, graph: CompiledStateGraph[Any], config: Any, values: Any, as_node: str | None = None
    ) -> RunnableConfig:
        if self.is_async:
            return await graph.aupdate_state(config, values, as_node=as_node)
        return graph.update_state(config, values, as_node=as_node)

    async def get_tuple(
        self, saver: BaseCheckpointSaver[Any], config: RunnableConfig
    ) -> CheckpointTuple | None:
        if self.is_async:
            return await saver.aget_tuple(config)
        return saver.get_tuple(config)

    async def list(
        self, saver: BaseCheckpointSaver[Any], config: RunnableConfig
    ) -> list[CheckpointTuple]:
        if self.is_async:
            return [t async for t in saver.alist(config)]
        return list(saver.list(config))
