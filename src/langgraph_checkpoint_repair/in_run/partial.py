"""Cancelling some of a step's pending calls while the others stay scheduled.

`update_state` always starts a new step: LangGraph drops the interrupted step's
pending tasks (its `Send` packets included), so an approved call would never
run. Instead, each rejected call's synthetic result is recorded as the result
of that call's own task in the interrupted step, the way LangGraph records a
task that finished while a sibling was interrupted. Resuming then runs only
the other tasks and applies every result together, once per call.

This needs one task per call (`Send` per call: `create_react_agent(...,
version="v2")`, LangChain's `create_agent`). A tool node that runs every call
of the message in one task (`ToolNode` reached by an edge, `version="v1"`)
would run the rejected calls again, so that case is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.types import PregelTask, Send

from ..compatibility.features import has_task_statuses, installed_version
from .cancel_plan import CancelPlan, CannotCancel

PUSH = "__pregel_push"
TASKS_CHANNEL = "__pregel_tasks"
CHECKPOINTER_KEY = "__pregel_checkpointer"
"""Where a parent graph (or the Agent Server) lends its saver through the config."""


@dataclass(frozen=True)
class TaskWrites:
    """Writes to record as the result of one pending task."""

    task_id: str
    task_path: str
    writes: list[tuple[str, Any]]


def task_writes(plan: CancelPlan, tup: CheckpointTuple | None) -> list[TaskWrites]:
    """The writes that cancel `plan.results`, one task each; refuses when a call has no own task."""
    sends: Sequence[Any] = (
        (tup.checkpoint["channel_values"].get(TASKS_CHANNEL) or []) if tup else []
    )
    task_of = {
        call_id: task
        for task in plan.target.tasks
        if task.result is None and task.name == plan.as_node
        for call_id in [_call_of(task, sends)]
        if call_id is not None
    }
    missing = [r.tool_call_id for r in plan.results if r.tool_call_id not in task_of]
    _refuse_kept_interrupts(
        [call_id for call_id, task in task_of.items() if task.interrupts],
        {r.tool_call_id for r in plan.results},
    )
    if missing:
        raise CannotCancel(
            f"calls {missing} do not run in tasks of their own (a tool node that runs every "
            "call of the message at once, such as create_react_agent(version='v1')), so "
            "cancelling only some calls would run them anyway; cancel all pending calls, "
            "or execute tools with one Send per call (version='v2')"
        )
    return [
        TaskWrites(task.id, path_str(task.path), [(plan.messages_key, [result])])
        for result in plan.results
        for task in [task_of[result.tool_call_id]]
    ]


def _refuse_kept_interrupts(interrupted: list[str], cancelled: set[str]) -> None:
    """Before langgraph 1.2.13 a task's interrupt stays pending after we record its result,
    and the resume would still ask for it: refuse rather than leave a thread that cannot
    resume with a single value."""
    waiting = [call_id for call_id in interrupted if call_id in cancelled]
    if waiting and not has_task_statuses():
        raise CannotCancel(
            f"calls {waiting} wait on an interrupt, and langgraph "
            f"{installed_version('langgraph')} keeps it pending after its result is recorded; "
            "cancel all pending calls, or upgrade to langgraph 1.2.13 or later"
        )


def checkpointer_of(graph: Any, config: Mapping[str, Any]) -> BaseCheckpointSaver[Any]:
    """The saver the graph's own state methods use: one lent through the config, else its own."""
    lent = config.get("configurable", {}).get(CHECKPOINTER_KEY)
    saver = lent if lent is not None else getattr(graph, "checkpointer", None)
    if not isinstance(saver, BaseCheckpointSaver):
        raise CannotCancel("the graph has no checkpointer")
    return saver


def path_str(path: Any) -> str:
    """A task path as LangGraph stores it next to the task's writes."""
    if isinstance(path, (tuple, list)):
        return "~" + ", ".join(path_str(part) for part in path)
    return f"{path:010d}" if isinstance(path, int) else str(path)


def _call_of(task: PregelTask, sends: Sequence[Any]) -> str | None:
    """The id of the one tool call a `Send` task carries, if it carries exactly one.

    Packets as LangGraph and LangChain send them: a `ToolCallWithContext`
    (`create_react_agent(version="v2")`), a one-call list (`create_agent`), or
    a bare tool call.
    """
    if len(task.path) < 2 or task.path[0] != PUSH or not isinstance(task.path[1], int):
        return None
    if task.path[1] >= len(sends) or not isinstance(sends[task.path[1]], Send):
        return None
    packet = sends[task.path[1]].arg
    if isinstance(packet, Mapping) and packet.get("__type") == "tool_call_with_context":
        packet = packet.get("tool_call")
    elif isinstance(packet, list) and len(packet) == 1:
        packet = packet[0]
    if isinstance(packet, Mapping) and packet.get("type") == "tool_call":
        call_id = packet.get("id")
        return call_id if isinstance(call_id, str) else None
    return None
