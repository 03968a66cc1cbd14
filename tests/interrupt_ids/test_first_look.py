"""PostgreSQL's first look loads a waiting head for its interrupt ids only where the load
finds something: it reads the ids off the head's rows where a task asks after taking an
answer, or asks two questions in one write, and clears every other head, so a `scan`
costs what it did before ids were checked."""

from __future__ import annotations

from typing import Any

import pytest
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


@pytest.mark.parametrize("scheme", [None, "per-question", "first"])
def test_a_head_is_loaded_for_its_ids_exactly_when_the_load_finds_something(
    pg_uri: str, scheme: Any
) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        asking_again = seed(saver)
        pages = PostgresStore(saver).pages(Selection(interrupt_ids=scheme))
        heads = [head for page in pages for head in page]
        loaded = {head.thread_id: saver.get_tuple(head.config) for head in heads}

    flagged = {head.thread_id for head in heads if head.asks_again}
    found = {t for t, tup in loaded.items() if tup is not None and id_findings(tup, scheme)}
    assert flagged == found and found <= asking_again
    assert scheme != "first" or found == asking_again  # the newest's ids are not 1.2.19's
