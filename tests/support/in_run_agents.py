"""Real agents with the in-run helpers in them: LangChain's `create_agent` with
middleware, and the prebuilt agent with `pre_model_hook`."""

from __future__ import annotations

import warnings
from typing import Any

from langchain.agents import create_agent
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import pre_model_hook
from tests.support.agents import ToolBox
from tests.support.fakes import ProviderModel
from tests.support.stores import Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent


def agent(
    replies: ProviderModel, box: ToolBox, store: Store, *middleware: Any
) -> CompiledStateGraph[Any]:
    graph: CompiledStateGraph[Any] = create_agent(
        replies,
        box.all,
        middleware=middleware,
        checkpointer=store.saver,
        interrupt_before=["tools"],
    )
    return graph


def hooked_agent(
    replies: ProviderModel, box: ToolBox, store: Store, version: Any, **hook: Any
) -> CompiledStateGraph[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(
            replies,
            box.all,
            checkpointer=store.saver,
            version=version,
            interrupt_before=["tools"],
            pre_model_hook=pre_model_hook(**hook),
        )
