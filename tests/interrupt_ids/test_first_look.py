"""PostgreSQL's first look loads a waiting head for its interrupt ids only where they may
fail: a task asking after taking an answer, or asking two questions in one write. Every
other head it clears holds no id finding under either release's scheme, so a `scan`
still costs what it did on stores where most waiting threads wait on a first question."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command

from langgraph_checkpoint_repair.interrupt_ids import id_findings
from langgraph_checkpoint_repair.stores.base import Selection
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from tests.support.two_questions import graph


def config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def seed(saver: PostgresSaver) -> set[str]:
    """Threads in every shape a node asking twice leaves; the names of those that ask
    again (after an answer, or twice at once)."""
    in_turn, at_once = graph(saver, False), graph(saver, True)
    in_turn.invoke({}, config("first-question"))
    at_once.invoke({}, config("at-once"))
    for thread, answer in [("by-id", None), ("plain", "yes"), ("done", None)]:
        in_turn.invoke({}, config(thread))
        q1 = in_turn.get_state(config(thread)).interrupts[0].id
        in_turn.invoke(Command(resume=answer or {q1: "yes"}), config(thread))
    q2 = in_turn.get_state(config("done")).interrupts[0].id
    in_turn.invoke(Command(resume={q2: "no"}), config("done"))
    return {"at-once", "by-id", "plain"}


def test_only_heads_that_ask_again_are_loaded_and_the_others_hold_no_finding(
    pg_uri: str,
) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        asking_again = seed(saver)
        heads = [head for page in PostgresStore(saver).pages(Selection()) for head in page]
        loaded = {head.thread_id: saver.get_tuple(head.config) for head in heads}

    flagged = {head.thread_id for head in heads if head.asks_again}
    found = {
        thread
        for thread, tup in loaded.items()
        for scheme in ("per-question", "first")
        if tup is not None and id_findings(tup, scheme)
    }
    assert flagged == asking_again
    assert found <= flagged and found == {"at-once", "by-id", "plain"}
