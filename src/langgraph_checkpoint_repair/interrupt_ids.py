"""Interrupt ids across LangGraph releases: which question an answer by id reaches.

A client answers a paused question by its id: `Command(resume={id: value})`. The id
is a hash of the asking task's namespace (`<node>:<task id>`, under its parents').
Through LangGraph 1.2.19 every question of a task has that same id (scheme `first`);
from 1.2.20 the question asked after k answers has the hash of `<namespace>|k`, the
first keeping the old form (scheme `per-question`). Strict resume only compares an
answer's id with the ids stored in the head's `__interrupt__` write, so:

- a later question stored with the task's first id (paused under 1.2.19) takes a
  retried answer to the first question, even in strict mode;
- a question stored with a `|k` id (paused under 1.2.20 or later) is not reached by
  a 1.2.19 worker answering by that id: it drops the answer and asks again.

The stored rows say which: the task's `__interrupt__` write holds the ids, and its
own `__resume__` write the k answers it already took. Judged here without I/O; the
node is found by hashing (`waiting.task_nodes`). A question that came up from a
subgraph carries the subgraph's namespace and is judged at the subgraph's head.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from xxhash import xxh3_128_hexdigest

from .codes import INTERRUPT_ID_SCHEMES, InterruptIds
from .decoding.integrity import Finding
from .in_flight import INTERRUPT_CHANNEL
from .stale_answers import RESUME_CHANNEL
from .waiting import WaitingHead, interrupt_field, interrupts_of, task_nodes

SHARED = (
    "question {n} of node {node!r} carries an id another of its questions had: an answer "
    "meant for that one, retried by id, lands here, even in strict resume mode"
)
MISMATCH = (
    "question {n} of node {node!r} has id {stored}, where a release that resumes "
    "with {scheme!r} ids expects {expected}: an answer by the id clients were shown "
    "does not reach it"
)
UNTOLD = (
    "a later question of task {task}, whose node cannot be told from the stored rows: "
    "its id cannot be checked"
)


def checked_scheme(scheme: object) -> InterruptIds | None:
    """`scheme` when it names how a release makes ids (or is None); else ValueError."""
    if scheme is not None and scheme not in INTERRUPT_ID_SCHEMES:
        known = ", ".join(INTERRUPT_ID_SCHEMES)
        raise ValueError(f"interrupt_ids must be one of {known}, not {scheme!r}")
    return scheme


def question_id(namespace: str, answered: int, scheme: InterruptIds) -> str:
    """The id a release computes for the question a task asks after `answered` answers."""
    if scheme == "per-question" and answered:
        namespace = f"{namespace}|{answered}"
    return xxh3_128_hexdigest(namespace.encode())


def task_namespace(parent: str, node: str, task_id: str) -> str:
    """The namespace LangGraph runs a task under (what its interrupt ids hash)."""
    own = f"{node}:{task_id}"
    return f"{parent}|{own}" if parent else own


@dataclass(frozen=True)
class AskingTask:
    """A task of the head with an open question: its node (None when it cannot be told),
    namespace, the answers it already took, and the ids of what its write asks."""

    task_id: str
    node: str | None
    namespace: str | None
    answered: int
    ids: tuple[str | None, ...]

    @property
    def own_ids(self) -> tuple[str, ...]:
        """The ids of the questions the task itself asked (any release's), leaving out
        those a subgraph it runs asked."""
        if self.namespace is None:
            return ()
        family = {question_id(self.namespace, k, "per-question") for k in range(self.answered + 1)}
        return tuple(id_ for id_ in self.ids if id_ in family)

    @property
    def question(self) -> int:
        """The number of the question it asks now (1 for the first)."""
        return self.answered + 1

    def shared_ids(self) -> set[str]:
        """The ids of its questions that do not tell them apart: the task's first id on a
        later question, or one id on two questions asked at once."""
        own = self.own_ids
        shared = {id_ for id_ in own if own.count(id_) > 1}
        first = question_id(self.namespace or "", 0, "first")
        if self.answered > 0 and first in own:
            shared.add(first)
        return shared

    def shares_id(self) -> bool:
        """Whether one of its questions carries an id that does not tell it apart."""
        return bool(self.shared_ids())

    def expected(self, scheme: InterruptIds) -> str | None:
        """The id a release of `scheme` computes for its question; None when unknown."""
        if self.namespace is None:
            return None
        return question_id(self.namespace, self.answered, scheme)

    def mismatched(self, scheme: InterruptIds) -> bool:
        """Whether the release of `scheme` would not find its question by the stored id
        (or cannot be shown to: a later question whose node is unknown)."""
        if self.namespace is None:
            return self.answered > 0
        return any(id_ != self.expected(scheme) for id_ in self.own_ids)

    def rekeyable(self, scheme: InterruptIds) -> bool:
        """Whether its question can take the id `scheme` computes: one question, known
        node. Two asked at once would get one id again: they are only reported."""
        own = self.own_ids
        return len(own) == 1 and own[0] != self.expected(scheme)


def asking_tasks(tup: CheckpointTuple) -> list[AskingTask]:
    """Each task of the head with an `__interrupt__` write, as `AskingTask`."""
    writes = list(tup.pending_writes or ())
    asked: dict[str, list[str | None]] = {}
    answered: dict[str, int] = {}
    for task_id, channel, value in writes:
        if channel == INTERRUPT_CHANNEL:
            asked.setdefault(str(task_id), []).extend(
                item_id(item) for item in interrupts_of(value)
            )
        elif channel == RESUME_CHANNEL:
            answered[str(task_id)] = len(value) if isinstance(value, list) else 1
    if not asked:
        return []
    nodes = task_nodes(tup)
    parent = str(tup.config["configurable"].get("checkpoint_ns", ""))
    tasks = []
    for task_id, ids in asked.items():
        node = nodes.get(task_id)
        namespace = None if node is None else task_namespace(parent, node, task_id)
        tasks.append(AskingTask(task_id, node, namespace, answered.get(task_id, 0), tuple(ids)))
    return tasks


def item_id(item: Any) -> str | None:
    """An interrupt's id, read as an `Interrupt` or as plain data."""
    found = interrupt_field(item, "id")
    return found if isinstance(found, str) else None


def id_findings(tup: CheckpointTuple, scheme: InterruptIds | None) -> tuple[Finding, ...]:
    """`interrupt_id_shared` for each question whose id does not tell it apart, and with
    the `scheme` of the release that will resume, `interrupt_id_mismatch` for each whose
    stored id that release does not compute."""
    found: list[Finding] = []
    for task in asking_tasks(tup):
        node, n = task.node, task.question
        if task.shares_id():
            found.append(_finding("interrupt_id_shared", task, SHARED.format(n=n, node=node)))
        if scheme is not None and task.mismatched(scheme):
            found.append(_finding("interrupt_id_mismatch", task, _mismatch(task, scheme)))
    return tuple(found)


def _mismatch(task: AskingTask, scheme: InterruptIds) -> str:
    if task.namespace is None:
        return UNTOLD.format(task=task.task_id)
    expected = task.expected(scheme)
    stored = next((id_ for id_ in task.own_ids if id_ != expected), None)
    return MISMATCH.format(
        n=task.question, node=task.node, stored=stored, scheme=scheme, expected=expected
    )


def _finding(code: Any, task: AskingTask, error: str) -> Finding:
    return Finding(code, INTERRUPT_CHANNEL, task.task_id, error=error, node=task.node)


def marked_shared(head: WaitingHead, tup: CheckpointTuple) -> WaitingHead:
    """`head` (`waiting.waiting_head` of `tup`) with each question whose id does not tell
    it apart marked (`OpenInterrupt.id_shared`), as `scan --waiting` lists it."""
    shared = {id_ for task in asking_tasks(tup) for id_ in task.shared_ids()}
    if not shared:
        return head
    marked = tuple(
        replace(question, id_shared=True) if question.id in shared else question
        for question in head.interrupts
    )
    return replace(head, interrupts=marked)


def rekeys(tup: CheckpointTuple, scheme: InterruptIds) -> dict[str, tuple[str, str]]:
    """By task id, the (stored, computed) id of each question `scheme` re-keys."""
    return {
        task.task_id: (task.own_ids[0], str(task.expected(scheme)))
        for task in asking_tasks(tup)
        if task.rekeyable(scheme)
    }


def rekeyed(value: Any, old: str, new: str) -> Any:
    """An `__interrupt__` write's value with the question of id `old` carrying `new`
    (each interrupt copied, never changed in place: the loaded tuple stays as read)."""
    items = [with_id(item, new) if item_id(item) == old else item for item in interrupts_of(value)]
    return type(value)(items) if isinstance(value, (list, tuple)) else items[0]


def with_id(item: Any, new: str) -> Any:
    """A copy of an interrupt (an `Interrupt`, or plain data) carrying the id `new`."""
    if isinstance(item, Mapping):
        return {**item, "id": new}
    copied = copy.copy(item)
    object.__setattr__(copied, "id", new)
    return copied


def rekeyed_writes(
    writes: Sequence[tuple[str, str, Any]], moves: Mapping[str, tuple[str, str]]
) -> list[tuple[str, str, Any]]:
    """The pending writes with each `moves` task's question re-keyed (what a load shows)."""
    out = []
    for task_id, channel, value in writes:
        move = moves.get(str(task_id))
        if channel == INTERRUPT_CHANNEL and move is not None:
            value = rekeyed(value, *move)
        out.append((task_id, channel, value))
    return out
