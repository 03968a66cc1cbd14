"""The ids each scheme computes are LangGraph's own: `per-question` is the id releases from
1.2.20 compute (`_interrupt_id`), and `first` the id every release gives a task's first
question (`Interrupt.from_ns`), which 1.2.19 and earlier give all of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import langgraph.types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Interrupt

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.batch import RunOptions
from langgraph_checkpoint_repair.interrupt_ids import AskingTask, question_id, task_namespace

names = st.text(
    alphabet=st.characters(blacklist_characters="|:", codec="utf-8"),
    min_size=1,
    max_size=12,
)
task_ids = st.uuids().map(str)
releases_id = getattr(langgraph.types, "_interrupt_id", None)
per_question_release = pytest.mark.skipif(
    releases_id is None,
    reason="this LangGraph gives every question its task's first id",
)


def _interrupt_id(namespace: str, answered: int) -> str:
    """The id this LangGraph release computes."""
    assert releases_id is not None
    return str(releases_id(namespace, answered))


def asking(
    node: str, task_id: str, answered: int, ids: Callable[[str], tuple[str, ...]]
) -> AskingTask:
    """A root task of `node` that took `answered` answers and asks with `ids(namespace)`."""
    namespace = task_namespace("", node, task_id)
    return AskingTask(task_id, node, namespace, answered, ids(namespace))


@given(names, task_ids)
def test_first_ids_are_every_releases(node: str, task_id: str) -> None:
    namespace = task_namespace("", node, task_id)

    assert question_id(namespace, 3, "first") == Interrupt.from_ns(None, namespace).id


@per_question_release
@given(st.lists(st.tuples(names, task_ids), min_size=1, max_size=3), st.integers(0, 9))
def test_per_question_ids_are_langgraphs(path: list[tuple[str, str]], answered: int) -> None:
    namespace = ""
    for node, task_id in path:
        namespace = task_namespace(namespace, node, task_id)

    assert question_id(namespace, answered, "per-question") == _interrupt_id(namespace, answered)
    assert question_id(namespace, answered, "first") == _interrupt_id(namespace, 0)


@per_question_release
@given(names, task_ids, st.integers(1, 9))
def test_a_later_question_with_the_first_id_is_shared_and_rekeyable(
    node: str, task_id: str, answered: int
) -> None:
    later = asking(node, task_id, answered, lambda ns: (question_id(ns, 0, "first"),))
    own = asking(node, task_id, answered, lambda ns: (_interrupt_id(ns, answered),))

    assert later.shares_id() and later.rekeyable("per-question")
    assert not later.mismatched("first")
    assert not own.shares_id() and not own.mismatched("per-question")
    assert own.mismatched("first") and own.rekeyable("first")


@per_question_release
@given(names, task_ids, st.integers(0, 3))
def test_two_questions_with_one_id_are_shared_and_never_rekeyed(
    node: str, task_id: str, answered: int
) -> None:
    task = asking(node, task_id, answered, lambda ns: (_interrupt_id(ns, answered),) * 2)

    assert task.shares_id()
    assert not task.rekeyable("per-question") and not task.rekeyable("first")


@per_question_release
@given(names, task_ids, st.integers(0, 3))
def test_a_subgraphs_question_is_not_the_tasks_own(node: str, task_id: str, answered: int) -> None:
    task = asking(
        node, task_id, answered, lambda ns: (_interrupt_id(task_namespace(ns, "in", "t"), 0),)
    )

    assert task.own_ids == ()
    assert not task.shares_id() and not task.mismatched("per-question")
    assert not task.mismatched("first")


def test_a_later_question_of_an_unknown_node_fails_the_gate_and_is_never_rekeyed() -> None:
    task = AskingTask("t", None, None, 1, ("0" * 32,))
    first_question = AskingTask("t", None, None, 0, ("0" * 32,))

    assert task.mismatched("per-question") and not task.rekeyable("per-question")
    assert not first_question.mismatched("first")


@pytest.mark.parametrize(
    "make",
    [
        lambda scheme: PatchingCheckpointer(InMemorySaver(), interrupt_ids=scheme),
        lambda scheme: RunOptions(interrupt_ids=scheme),
    ],
)
def test_a_scheme_no_release_uses_is_refused(make: Any) -> None:
    with pytest.raises(ValueError, match="interrupt_ids must be one of per-question, first"):
        make("sometimes")
