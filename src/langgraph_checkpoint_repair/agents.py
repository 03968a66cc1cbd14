"""`RepairToolCallsMiddleware`: the repair engine before every model call of a LangChain agent.

Needs the optional extra `agents` (LangChain >= 1); the rest of the package
works without it and never imports this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from .engine import RepairPolicy, repair_messages
from .engine.context import without_budget
from .metrics import record_repairs

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "RepairToolCallsMiddleware needs LangChain >= 1: "
        "pip install 'langgraph-checkpoint-repair[agents]'"
    ) from error

__all__ = ["RepairToolCallsMiddleware"]

if TYPE_CHECKING:
    _Middleware = AgentMiddleware[AgentState[Any], Any, Any]
else:  # LangChain 1.0 takes two type parameters, later versions three
    _Middleware = AgentMiddleware


class RepairToolCallsMiddleware(_Middleware):
    """Repairs the agent's history in `before_model`, so the model never sees a broken one.

    `create_agent(model, tools, middleware=[RepairToolCallsMiddleware()])`.
    The repaired list replaces the state's messages (an `Overwrite`, which
    delta channels such as deep agents' honour too; a `before_model` update is
    stored), so the fix persists with the next checkpoint; a clean history is
    left alone. Nothing is in flight before a model call, so every unanswered
    call is answered.

    With `use_model_profile` (the default) and a policy without a
    `model_profile`, each call's messages also lose the media kinds the
    model's own `profile` says it does not take. That applies to the request
    only; a policy with `model_profile=` stores it.

    A token budget (the policy's `max_input_tokens`, else the model profile's)
    trims the request only, never the state: a trim drops messages, and in a
    running agent nothing would record or undo it, while the state's history
    may still matter to the agent's own tools. The stored thread is trimmed,
    audited and undoable, by `PatchingCheckpointer` and `langgraph-repair`.
    `use_model_counter=True` counts with the model's own
    `get_num_tokens_from_messages` instead of LangChain's approximation.
    """

    def __init__(
        self,
        policy: RepairPolicy | None = None,
        *,
        use_model_profile: bool = True,
        use_model_counter: bool = False,
    ) -> None:
        super().__init__()
        self.policy = policy
        self.use_model_profile = use_model_profile
        self.use_model_counter = use_model_counter

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        policy = without_budget(self.policy) if self.policy else None
        result = repair_messages(state["messages"], policy=policy)
        if not result.changed:
            return None
        record_repairs("in_run", {"messages": result.actions})
        return {"messages": Overwrite(result.messages)}

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(self._for_model(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        return await handler(self._for_model(request))

    def _for_model(self, request: ModelRequest) -> ModelRequest:
        """The request within the model's profile and the budget; itself if nothing changes."""
        policy = self._request_policy(request.model)
        if policy is None:
            return request
        result = repair_messages(request.messages, policy=policy)
        if not result.changed:
            return request
        record_repairs("in_run", {"messages": result.actions})
        return request.override(messages=result.messages)  # type: ignore[arg-type]

    def _request_policy(self, model: Any) -> RepairPolicy | None:
        """The policy for one request: the model's profile where the policy has none,
        its counter when asked; None when the request has nothing more to fix."""
        policy = self.policy or RepairPolicy()
        profile = getattr(model, "profile", None) if self.use_model_profile else None
        if profile and policy.model_profile is None:
            policy = replace(policy, model_profile=profile)
        elif policy.input_budget is None:
            return None  # `before_model` has applied this very policy to the state
        if self.use_model_counter and policy.token_counter is None:
            policy = replace(policy, token_counter=model.get_num_tokens_from_messages)
        return policy if policy.input_budget is not None or policy.rewrites_content else None
