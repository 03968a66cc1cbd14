"""What cancelling a thread's pending tool calls writes, read off a `StateSnapshot`.

Pure functions shared by the sync and async entry points, which only fetch the
snapshot and apply the plan. Pending calls are those of the last AIMessage,
when nothing but tool results follows it, that have no result yet: exactly
the calls an interrupted thread would run on resume. Broken history anywhere
else is the business of `PatchingCheckpointer` and the batch job.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot, StateUpdate

from ..engine import RepairAction, RepairPolicy, is_synthetic, repair_messages
from ..engine.context import without_budget


class CannotCancel(ValueError):
    """The request cannot be carried out without running or losing a tool call."""


@dataclass(frozen=True)
class Pending:
    """The unanswered calls of one snapshot's last AIMessage, with their synthetic results."""

    call_ids: tuple[str, ...]
    """Every call of that AIMessage, answered or not."""
    results: tuple[ToolMessage, ...]
    """One synthetic result per unanswered call, in call order."""
    actions: tuple[RepairAction, ...]


@dataclass(frozen=True)
class CancelPlan:
    """Where the synthetic results go and which calls stay scheduled."""

    target: StateSnapshot
    """The thread's snapshot, or a subgraph's when the thread is interrupted inside one."""
    messages_key: str
    as_node: str | None
    results: tuple[ToolMessage, ...]
    actions: tuple[RepairAction, ...]
    kept: tuple[str, ...]
    """Pending calls that are not cancelled and will run on resume."""

    @property
    def partial(self) -> bool:
        return bool(self.results) and bool(self.kept)


@dataclass(frozen=True)
class CancelResult:
    """What `cancel_pending_tool_calls` did."""

    actions: tuple[RepairAction, ...]
    """One `placeholder` action per cancelled call; empty when nothing was pending."""
    config: RunnableConfig | None
    """The checkpoint that holds the synthetic results; None when nothing was written."""
    kept: tuple[str, ...] = ()
    """Pending calls left to run when only some were cancelled."""

    @property
    def cancelled(self) -> bool:
        return bool(self.actions)

    @property
    def tool_call_ids(self) -> tuple[str, ...]:
        return tuple(a.tool_call_id or "" for a in self.actions)


def plan_cancel(
    snapshot: StateSnapshot,
    policy: RepairPolicy,
    *,
    messages_key: str,
    tool_call_ids: Collection[str] | None,
    as_node: str | None,
) -> CancelPlan:
    """The cancellation of `tool_call_ids` (all pending calls when None) in `snapshot`."""
    target, pending = locate(snapshot, policy, messages_key)
    wanted = _check_ids(pending, tool_call_ids)
    chosen = [
        n for n, r in enumerate(pending.results) if wanted is None or r.tool_call_id in wanted
    ]
    return CancelPlan(
        target=target,
        messages_key=messages_key,
        as_node=tool_node(target, as_node) if chosen else as_node,
        results=tuple(pending.results[n] for n in chosen),
        actions=tuple(pending.actions[n] for n in chosen),
        kept=tuple(r.tool_call_id for n, r in enumerate(pending.results) if n not in chosen),
    )


def locate(
    snapshot: StateSnapshot, policy: RepairPolicy, messages_key: str
) -> tuple[StateSnapshot, Pending]:
    """The outermost snapshot with pending calls: the thread's, else an interrupted subgraph's."""
    pending = pending_calls(_messages(snapshot.values, messages_key), policy)
    if pending.results:
        return snapshot, pending
    found = [
        located
        for task in snapshot.tasks
        if isinstance(task.state, StateSnapshot)
        for located in [locate(task.state, policy, messages_key)]
        if located[1].results
    ]
    if len(found) > 1:
        namespaces = [s.config["configurable"].get("checkpoint_ns") for s, _ in found]
        raise CannotCancel(
            f"several subgraphs have pending tool calls ({namespaces}); "
            "cancel each one with its own config"
        )
    return found[0] if found else (snapshot, pending)


def pending_calls(messages: Sequence[BaseMessage], policy: RepairPolicy) -> Pending:
    """The last AIMessage's unanswered calls and the engine's synthetic results for them."""
    ai_index = _trailing_ai(messages)
    if ai_index is None:
        return Pending((), (), ())
    ai = messages[ai_index]
    assert isinstance(ai, AIMessage)
    call_ids = tuple(c["id"] or "" for c in ai.tool_calls) + tuple(
        c["id"] or "" for c in ai.invalid_tool_calls
    )
    # A token budget is not this helper's business: it writes results, never trims.
    repaired = repair_messages(messages, policy=without_budget(policy))
    actions = tuple(a for a in repaired.actions if a.kind == "placeholder" and a.index == ai_index)
    if not actions:
        return Pending(call_ids, (), ())
    return Pending(call_ids, _new_results(repaired.messages, messages, ai), actions)


def tool_node(snapshot: StateSnapshot, as_node: str | None) -> str | None:
    """The node the results are written as: the one whose pending tasks would answer the calls.

    It is read off the snapshot, so custom tool-node names work; with nothing
    scheduled it is None and LangGraph uses the node that wrote last.
    """
    if as_node is not None:
        return as_node
    names = sorted(set(snapshot.next))
    if len(names) > 1:
        raise CannotCancel(f"tasks of several nodes are pending ({names}); pass as_node=")
    return names[0] if names else None


def state_updates(plan: CancelPlan) -> list[StateUpdate]:
    """One superstep that finishes the pending step: finished tasks' results, then ours.

    `update_state` drops the writes of tasks that finished in the interrupted
    step (a parallel tool that completed before its sibling raised), so they are
    carried over under their own task ids; nothing that ran is lost.
    """
    finished = [t for t in plan.target.tasks if t.result is not None and not t.interrupts]
    waiting = [t.id for t in plan.target.tasks if t.result is None and t.name == plan.as_node]
    updates = [StateUpdate(t.result, t.name, t.id) for t in finished]
    values = {plan.messages_key: list(plan.results)}
    updates.append(StateUpdate(values, plan.as_node, waiting[0] if waiting else None))
    return updates


def _check_ids(pending: Pending, tool_call_ids: Collection[str] | None) -> set[str] | None:
    if tool_call_ids is None:
        return None
    wanted = {tool_call_ids} if isinstance(tool_call_ids, str) else set(tool_call_ids)
    unknown = wanted - set(pending.call_ids)
    if unknown:
        raise CannotCancel(
            f"no call {sorted(unknown)} in the last AI message; "
            f"its calls are {list(pending.call_ids)}"
        )
    return wanted


def _messages(values: Any, key: str) -> list[BaseMessage]:
    found = values.get(key) if isinstance(values, Mapping) else getattr(values, key, None)
    return found if isinstance(found, list) else []


def _trailing_ai(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the last AIMessage when only tool results follow it."""
    i = len(messages) - 1
    while i >= 0 and isinstance(messages[i], ToolMessage):
        i -= 1
    return i if i >= 0 and isinstance(messages[i], AIMessage) else None


def _new_results(
    repaired: Sequence[BaseMessage], original: Sequence[BaseMessage], ai: AIMessage
) -> tuple[ToolMessage, ...]:
    """The synthetic results the engine inserted after `ai`, in call order."""
    start = next(i for i in range(len(repaired) - 1, -1, -1) if repaired[i] is ai)
    existing = {id(m) for m in original}
    return tuple(
        m
        for m in repaired[start + 1 :]
        if isinstance(m, ToolMessage) and is_synthetic(m) and id(m) not in existing
    )
