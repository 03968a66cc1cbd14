"""Cancel a thread's pending tool calls durably, before it gets new input instead of a resume.

When an interrupted thread receives a new message, LangGraph discards the
pending tool tasks and the next model call fails on the unanswered calls. The
application knows it is moving on, so it writes a synthetic result for each
pending call first, through LangGraph's own `update_state`: a normal
checkpoint that every saver stores and every later run reads.

The sync and async functions are twins: both fetch the snapshot, ask `cancel_plan`
what to write and write it; only the I/O calls differ.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel

from ..engine import RepairPolicy
from .cancel_plan import CancelPlan, CancelResult, plan_cancel, state_updates
from .partial import checkpointer_of, task_writes
from .texts import cancel_policy

Graph = Pregel[Any, Any, Any, Any]


def cancel_pending_tool_calls(
    graph: Graph,
    config: RunnableConfig,
    *,
    reason: str | None = None,
    policy: RepairPolicy | None = None,
    tool_call_ids: Collection[str] | None = None,
    as_node: str | None = None,
    messages_key: str = "messages",
) -> CancelResult:
    """Answer the thread's pending tool calls with synthetic results, so it can move on.

    Pending calls are the unanswered calls of the last AI message, in the
    thread or, when the thread is interrupted inside a subgraph, in that
    subgraph. Their results are written as the node that would have answered
    them (the pending task's node, e.g. `tools`; override with `as_node`), so
    the graph continues to the model on resume and a new message finds a
    valid history. Results of tasks that finished in the same step are kept.

    `reason` goes into the synthetic content ("...was cancelled before it
    completed: the user changed the subject."). `policy` sets the language or
    the text, as for `repair_messages`.

    `tool_call_ids` cancels only those calls (a reviewer rejects one call and
    approves another): the others stay scheduled and run once on resume. The
    rejected calls' results are recorded on the interrupted step itself, so
    this is for a thread that will be resumed (moving on instead discards
    them: cancel again without ids first). It needs one task per call (Send
    per call) and raises `CannotCancel` for a tool node that runs every call
    at once, which would run the rejected calls too.

    Call it while no run is active on the thread: the write applies to the
    checkpoint the pending calls were read from. Returns a `CancelResult`;
    `cancelled` is False when nothing was pending and nothing was written.
    """
    state = graph.get_state(config, subgraphs=True)
    plan, target = _plan(state, config, reason, policy, tool_call_ids, as_node, messages_key)
    if not plan.results:
        return CancelResult((), None, plan.kept)
    if plan.partial:
        saver = checkpointer_of(graph, config)
        for task in task_writes(plan, saver.get_tuple(target)):
            saver.put_writes(target, task.writes, task.task_id, task.task_path)
        return CancelResult(plan.actions, target, plan.kept)
    written = graph.bulk_update_state(target, [state_updates(plan)])
    return CancelResult(plan.actions, written)


async def acancel_pending_tool_calls(
    graph: Graph,
    config: RunnableConfig,
    *,
    reason: str | None = None,
    policy: RepairPolicy | None = None,
    tool_call_ids: Collection[str] | None = None,
    as_node: str | None = None,
    messages_key: str = "messages",
) -> CancelResult:
    """The async twin of `cancel_pending_tool_calls`."""
    state = await graph.aget_state(config, subgraphs=True)
    plan, target = _plan(state, config, reason, policy, tool_call_ids, as_node, messages_key)
    if not plan.results:
        return CancelResult((), None, plan.kept)
    if plan.partial:
        saver = checkpointer_of(graph, config)
        for task in task_writes(plan, await saver.aget_tuple(target)):
            await saver.aput_writes(target, task.writes, task.task_id, task.task_path)
        return CancelResult(plan.actions, target, plan.kept)
    written = await graph.abulk_update_state(target, [state_updates(plan)])
    return CancelResult(plan.actions, written)


def _plan(
    state: Any,
    config: RunnableConfig,
    reason: str | None,
    policy: RepairPolicy | None,
    tool_call_ids: Collection[str] | None,
    as_node: str | None,
    messages_key: str,
) -> tuple[CancelPlan, RunnableConfig]:
    """What both shells write, and the config pinned to where it must go."""
    plan = plan_cancel(
        state,
        cancel_policy(policy, reason),
        messages_key=messages_key,
        tool_call_ids=tool_call_ids,
        as_node=as_node,
    )
    return plan, _config_for(config, plan)


def _config_for(config: RunnableConfig, plan: CancelPlan) -> RunnableConfig:
    """The user's config, pinned to the checkpoint (and namespace) the plan was made from."""
    configurable = {**config.get("configurable", {}), **plan.target.config["configurable"]}
    return {**config, "configurable": configurable}
