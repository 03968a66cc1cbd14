"""The rollback's rules on rows built by hand (`retention.rollback`): which checkpoints
go, which stay for a later run, and which writes of the checkpoint a run started from
are the run's. The stores' tests run them on real graphs."""

from __future__ import annotations

from uuid import UUID, uuid5

from langgraph_checkpoint_repair.retention.keep import StoredCheckpoint
from langgraph_checkpoint_repair.retention.rollback import (
    StoredWrite,
    added_by_run,
    plan_rollback,
    starting_points,
    thread_rollback,
)
from langgraph_checkpoint_repair.stale_answers import NULL_TASK_ID

START = "1f0c2a9e-0000-6000-8000-000000000001"


def row(cid: str, parent: str | None, run: str, **more: object) -> StoredCheckpoint:
    return StoredCheckpoint("", cid, parent, run_id=run, source="loop", **more)  # type: ignore[arg-type]


def write(task: str, idx: int, channel: str, at: str = START) -> StoredWrite:
    return StoredWrite("", at, task, idx, channel)


def test_a_resume_takes_its_answer_and_the_resumed_task_s_writes_not_the_question() -> None:
    held = [
        write("asker", -3, "__interrupt__"),
        write(NULL_TASK_ID, -4, "__resume__"),
        write("asker", -4, "__resume__"),
        write("asker", 0, "messages"),
        write("sibling", 0, "notes"),
    ]

    theirs = added_by_run(START, held, went_on=True)

    assert [(w.task_id, w.channel) for w in theirs] == [
        (NULL_TASK_ID, "__resume__"), ("asker", "__resume__"), ("asker", "messages")
    ]  # fmt: skip


def test_a_run_from_a_checkpoint_paused_before_its_step_owns_every_write_there() -> None:
    held = [write("tools", 0, "messages"), write("tools", 1, "branch:to:agent")]

    assert added_by_run(START, held, went_on=True) == held
    assert added_by_run(START, held, went_on=False) == []  # a new input: it ran no task there


def test_a_delta_input_stored_on_the_starting_checkpoint_is_the_run_s() -> None:
    input_task = str(uuid5(UUID(START), "__input__"))
    held = [write(input_task, 0, "messages"), write("earlier", 0, "messages")]

    assert added_by_run(START, held, went_on=False) == [held[0]]
    assert added_by_run("not-a-uuid", held[1:], went_on=False) == []


def test_a_delta_chain_a_later_run_reads_keeps_the_run_s_rows() -> None:
    rows = [
        row("a1", None, "r1", holds=frozenset({"messages"}), versions={"messages": "1"},
            delta=frozenset({"messages"})),
        row("a2", "a1", "r1", versions={"messages": "2"}, delta=frozenset({"messages"})),
        row("b1", "a2", "r2", versions={"messages": "3"}, delta=frozenset({"messages"})),
    ]  # fmt: skip

    outcome = thread_rollback("t", rows, frozenset({"r1"}))

    assert not isinstance(outcome, dict) and getattr(outcome, "skipped", None) == "built_on"
    assert outcome.built_on == 2  # type: ignore[union-attr]


def test_a_plain_run_a_later_run_descends_from_goes_and_the_pointer_is_cleared() -> None:
    rows = [row("a1", None, "r1"), row("a2", "a1", "r1"), row("b1", "a2", "r2")]

    plan = plan_rollback(rows, frozenset({"r1"}))

    assert plan.deleted == {"": ["a1", "a2"]} and plan.orphaned == {"": ["b1"]}
    assert starting_points(rows, frozenset({"r1"})) == []  # nothing of r1 is the head again


def test_the_checkpoint_the_run_started_from_is_read_only_where_it_is_the_head_again() -> None:
    rows = [row("a1", None, "r1"), row("b1", "a1", "r2"), row("b2", "b1", "r2")]

    assert starting_points(rows, frozenset({"r2"})) == [("", "a1")]
    assert starting_points(rows, frozenset({"r1"})) == []
