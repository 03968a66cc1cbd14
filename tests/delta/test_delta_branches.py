"""Which of a fork base's writes built which child: a fork one step on copies its
parent (none of the parent's writes are its own), an update's writes carry the task id
derived from the checkpoint it updated, and the graph's own children never replay them."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from uuid import UUID, uuid5

from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from langgraph_checkpoint_repair.delta.branches import (
    copies_its_parent,
    update_task_ids,
    writes_toward,
)
from langgraph_checkpoint_repair.delta.proof import NOT_STORED, Link, prove
from tests.support.histories import ai, human

BASE = str(uuid6())
UPDATE = str(uuid5(UUID(BASE), "__interrupt__"))
LOOP_WRITE = ("task-of-the-graph", "messages", [ai("old", text="replaced answer")])
UPDATE_WRITE = (UPDATE, "messages", [human("edited")])


def test_a_fork_one_step_on_copies_its_parent_and_a_copy_two_steps_on_does_not() -> None:
    assert copies_its_parent("fork", 4, 3)
    assert not copies_its_parent("fork", 5, 3)  # `__copy__` hangs from the sibling's parent
    assert not copies_its_parent("loop", 4, 3)
    assert not copies_its_parent("fork", None, 3)


def test_each_child_gets_the_writes_that_built_it() -> None:
    writes = [LOOP_WRITE, UPDATE_WRITE]
    assert writes_toward(BASE, writes, "fork", child_copies_parent=True) == []
    assert writes_toward(BASE, writes, "update", False) == [UPDATE_WRITE]
    assert writes_toward(BASE, writes, "loop", False) == [LOOP_WRITE]
    assert writes_toward(BASE, writes, "input", False) == [LOOP_WRITE]
    # An update under a task's own id is not told apart: every write is its own.
    assert writes_toward(BASE, [LOOP_WRITE], "update", False) == [LOOP_WRITE]


def test_update_ids_derive_from_the_checkpoint_updated_only() -> None:
    assert UPDATE in update_task_ids(BASE, 1)
    assert UPDATE not in update_task_ids(str(uuid6()), 3)
    assert update_task_ids("not-a-uuid", 2) == set()


def test_a_seed_below_a_fork_that_kept_the_replaced_answer_is_found() -> None:
    """A regenerate: the base's writes are the replaced answer, the fork's the new one."""
    chain = [
        Link("0", _DeltaSnapshot([human("a")]), [], children=2, source="loop"),
        Link("1", NOT_STORED, [("t", "messages", [ai("new", text="new answer")])], source="fork",
             copies_parent=True),
        Link("2", _DeltaSnapshot([human("a"), ai("old", text="x"), ai("new", text="y")]), [],
             source="loop"),
    ]  # fmt: skip
    proof = prove(chain)
    (found,) = proof.divergences
    assert (found.code, found.checkpoint_id) == ("delta_value_diverged", "2")
    assert [m.id for m in proof.value or []] == ["h-a", "new"]


def test_a_copy_may_hold_what_its_own_command_wrote_but_not_the_other_branch() -> None:
    replaced = ("t", "messages", [ai("old", text="replaced answer")])
    base = Link("0", _DeltaSnapshot([human("a")]), [], children=2, others=[replaced])
    edited = Link("1", _DeltaSnapshot([human("a"), human("edit")]), [], source="fork",
                  copies_parent=True)  # fmt: skip
    assert prove([base, edited]).divergences == ()
    leaked = Link("1", _DeltaSnapshot([human("a"), ai("old", text="replaced answer")]), [],
                  source="fork", copies_parent=True)  # fmt: skip
    (found,) = prove([base, leaked]).divergences
    assert [m.id for m in found.proven] == ["h-a"]
