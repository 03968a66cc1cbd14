"""The proof of a delta channel's seeds, on chains built by hand: each seed is what its
parent's value and the parent's writes give, written once; a fork or a first
checkpoint is taken as stored; a repair of ours ends what was found."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)

from typing import Any

from langchain_core.messages import HumanMessage, RemoveMessage
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from langgraph_checkpoint_repair.delta.proof import NOT_STORED, Link, prove
from tests.support.histories import ai, human


def link(n: int, stored: Any = NOT_STORED, *writes: Any, **kw: Any) -> Link:
    return Link(f"{n:04}", stored, [(f"task-{n}", "messages", w) for w in writes], **kw)


def test_a_history_of_snapshots_that_hold_their_rows_is_proven_clean() -> None:
    chain = [
        link(0, NOT_STORED, [human("a")]),
        link(1, NOT_STORED, [ai("a1", text="x")]),
        link(2, _DeltaSnapshot([human("a"), ai("a1", text="x")]), [RemoveMessage(id="a1")]),
        link(3, NOT_STORED, [human("b")]),
        link(4, _DeltaSnapshot([human("a"), human("b")])),
    ]
    proof = prove(chain)
    assert proof.divergences == ()
    assert [m.id for m in proof.value or []] == ["h-a", "h-b"]


def test_messages_written_without_an_id_are_replayed_once() -> None:
    """An id-less write replayed twice would hold two messages where the seed has one."""
    chain = [
        link(0, NOT_STORED, [HumanMessage("no id")]),
        link(1, _DeltaSnapshot([HumanMessage("no id", id="made-up")])),
    ]
    assert prove(chain).divergences == ()


def test_an_erased_seed_is_found_and_the_replay_goes_on_from_the_proof() -> None:
    chain = [
        link(0, NOT_STORED, [human("a"), ai("a1", text="x")]),
        link(1, NOT_STORED, [human("b")]),
        link(2, _DeltaSnapshot([]), [human("c")], source="update"),
        link(3),
    ]
    proof = prove(chain)
    (found,) = proof.divergences
    assert (found.code, found.checkpoint_id) == ("delta_value_diverged", "0002")
    assert [m.id for m in found.proven] == ["h-a", "a1", "h-b"]
    assert [m.id for m in proof.value or []] == ["h-a", "a1", "h-b", "h-c"]


def test_a_fork_and_a_first_checkpoint_are_taken_as_stored() -> None:
    forked = [
        link(0, NOT_STORED, [human("a")], children=2),
        link(1, _DeltaSnapshot([human("other branch")]), source="update"),
    ]
    assert prove(forked).divergences == ()
    first = [link(0, _DeltaSnapshot([human("seed")]), [human("b")]), link(1)]
    assert [m.id for m in prove(first).value or []] == ["h-seed", "h-b"]


def test_a_repair_of_ours_ends_what_was_found() -> None:
    chain = [
        link(0, NOT_STORED, [human("a")]),
        link(1, _DeltaSnapshot([]), source="update"),
        link(2, _DeltaSnapshot([human("a")]), written_by="repair"),
    ]
    assert prove(chain).divergences == ()
    undone = prove([*chain, link(3, _DeltaSnapshot([]), source="update", written_by="undo")])
    assert [d.checkpoint_id for d in undone.divergences] == ["0003"]  # found again
    assert [m.id for m in undone.value or []] == ["h-a"]
