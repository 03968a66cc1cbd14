"""Stale answers: a human's answer that LangGraph would hand to the next question.

A plain `Command(resume=value)` is stored as a pending write of the null task
(`NULL_TASK_ID`, channel `__resume__`) on the head. The task that takes the
answer records it in its own `__resume__` list, and when it then asks a second
question the head keeps both rows. LangGraph (through 1.2.24) gives the null
task's answer to the next `interrupt()` that has none, so the next
`invoke(None)` (a "continue" button, a retry, a worker picking the thread up)
answers the second question with the first answer: a confirmation nobody gave.

The stored signature, judged here without I/O:

- the head holds a null-task `__resume__` write;
- an interrupt is still open (an `__interrupt__` write at the head);
- its value is already in the `__resume__` list of a task at the head, or of a
  task in a child namespace of one of the head's tasks (a subgraph asking).

An answer given by interrupt id (`Command(resume={id: value})`) is not stored as a
null-task write, and a thread waiting on its first question has no such write:
neither is ever stale. One case looks the same in the rows: a run that stored a
new answer equal to the old one and stopped before its task read it. Leaving
that answer out makes LangGraph ask again; it never delivers a wrong answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from .in_flight import INTERRUPT_CHANNEL

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
"""The task id LangGraph gives writes that come from the input, not from a task."""
RESUME_CHANNEL = "__resume__"

Write = tuple[str, str, Any]
"""A pending write as LangGraph hands it out: (task id, channel, value)."""


def is_null_answer(write: Write) -> bool:
    """Whether `write` is an answer given without an interrupt id (`Command(resume=v)`)."""
    return bool(write[0] == NULL_TASK_ID and write[1] == RESUME_CHANNEL)


def null_answer(writes: Iterable[Write]) -> Write | None:
    """The head's null-task answer, as LangGraph finds it (the first one)."""
    return next((write for write in writes if is_null_answer(write)), None)


def answers_taken(writes: Iterable[Write]) -> list[Any]:
    """Every answer the tasks among `writes` have already taken, in their lists' order."""
    taken: list[Any] = []
    for task_id, channel, value in writes:
        if channel != RESUME_CHANNEL or task_id == NULL_TASK_ID:
            continue
        taken.extend(value if isinstance(value, list) else [value])
    return taken


def asks_a_human(writes: Iterable[Write]) -> bool:
    """Whether an interrupt is open among `writes` (the head waits on a human)."""
    return any(write[1] == INTERRUPT_CHANNEL for write in writes)


def head_tasks(writes: Iterable[Write]) -> frozenset[str]:
    """The ids of the tasks with writes at the head: a subgraph one of them runs keeps
    its checkpoints under a child namespace ending in `:<task id>`."""
    return frozenset(str(write[0]) for write in writes if write[0] != NULL_TASK_ID)


def is_child_namespace(namespace: str, parent: str, task_ids: frozenset[str]) -> bool:
    """Whether `namespace` belongs to a subgraph run by one of `task_ids` under `parent`."""
    if parent:
        if not namespace.startswith(parent + "|"):
            return False
        namespace = namespace[len(parent) + 1 :]
    first = namespace.split("|", 1)[0]
    _, colon, task_id = first.rpartition(":")
    return bool(colon) and task_id in task_ids


def needs_child_writes(writes: Sequence[Write]) -> bool:
    """Whether the head alone cannot tell: a null answer and an open interrupt, but no
    task here took that answer (a subgraph may have)."""
    answer = null_answer(writes)
    if answer is None or not asks_a_human(writes):
        return False
    return not _among(answer[2], answers_taken(writes))


def stale_answer(writes: Sequence[Write], below: Iterable[Write] = ()) -> Write | None:
    """The head's null-task answer when it is stale; None when it is not (or absent).

    `below` are the pending writes of the head's tasks' child namespaces
    (`child_writes`), needed only where `needs_child_writes` says so.
    """
    answer = null_answer(writes)
    if answer is None or not asks_a_human(writes):
        return None
    taken = answers_taken(writes)
    if _among(answer[2], taken) or _among(answer[2], answers_taken(below)):
        return answer
    return None


def without_null_answers(writes: Sequence[Write]) -> list[Write]:
    """The pending writes less their null-task answers: what a load hands LangGraph
    once the answer is found stale (LangGraph reads only the first of them)."""
    return [write for write in writes if not is_null_answer(write)]


def _among(value: Any, taken: Sequence[Any]) -> bool:
    """Whether `value` equals one of `taken`; a value that cannot be compared is not."""
    for earlier in taken:
        try:
            if earlier is value or bool(earlier == value):
                return True
        except Exception:  # an odd value's __eq__: never a reason to call it stale
            continue
    return False


def thread_config(head: CheckpointTuple) -> Any:
    """The config listing every checkpoint of the head's thread, in all namespaces."""
    return {"configurable": {"thread_id": head.config["configurable"]["thread_id"]}}


def child_writes(listed: Iterable[CheckpointTuple], head: CheckpointTuple) -> list[Write]:
    """The pending writes of the `listed` checkpoints (`thread_config`) that belong to
    subgraphs of the head's tasks."""
    parent = str(head.config["configurable"].get("checkpoint_ns", ""))
    tasks = head_tasks(head.pending_writes or ())
    found: list[Write] = []
    for tup in listed:
        if is_child_namespace(
            str(tup.config["configurable"].get("checkpoint_ns", "")), parent, tasks
        ):
            found.extend(tup.pending_writes or ())
    return found


def subgraph_writes(saver: BaseCheckpointSaver[Any], head: CheckpointTuple) -> list[Write]:
    """What `stale_answer` needs beyond the head: its subgraphs' writes, read through the
    saver's listing of the thread only where `needs_child_writes` says the head cannot
    tell (none otherwise)."""
    if not needs_child_writes(list(head.pending_writes or ())):
        return []
    return child_writes(saver.list(thread_config(head)), head)


async def asubgraph_writes(saver: BaseCheckpointSaver[Any], head: CheckpointTuple) -> list[Write]:
    """The async twin of `subgraph_writes`."""
    if not needs_child_writes(list(head.pending_writes or ())):
        return []
    return child_writes([tup async for tup in saver.alist(thread_config(head))], head)
