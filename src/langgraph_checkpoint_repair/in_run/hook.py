"""`pre_model_hook`: hand the model of a prebuilt agent a repaired history.

Before a model call nothing is in flight any more: any call still unanswered
will never be answered by this run, so every defect is repaired.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.types import Overwrite

from ..engine import RepairPolicy, repair_messages
from ..metrics import record_repairs

LLM_INPUT = "llm_input_messages"
"""The key `create_react_agent` reads the model's input from, without storing it in `messages`."""

PreModelHook = Callable[[Any], dict[str, Any]]


def pre_model_hook(policy: RepairPolicy | None = None, persist: bool = False) -> PreModelHook:
    """A `pre_model_hook` for `create_react_agent` that repairs the history the model sees.

    By default the repaired list goes to the model only and the stored state is
    left as it is; `persist=True` also replaces the state's messages with it (an
    `Overwrite`, which every message channel honours, delta channels included),
    so the fix is stored with the next checkpoint. A clean history costs one
    linear check and stores nothing extra: the hook then returns an empty
    `llm_input_messages`, which also clears a value left by an earlier turn,
    and the agent falls back to `messages`.
    """

    def repair_before_model(state: Any) -> dict[str, Any]:
        result = repair_messages(_messages(state), policy=policy)
        if not result.changed:
            return {LLM_INPUT: []}
        record_repairs("in_run", {"messages": result.actions})
        if persist:
            return {"messages": Overwrite(result.messages), LLM_INPUT: []}
        return {LLM_INPUT: result.messages}

    return repair_before_model


def _messages(state: Any) -> Sequence[BaseMessage]:
    found = (
        state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    )
    return found or []
