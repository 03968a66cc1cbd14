"""One AI message with tens of thousands of calls goes through every path (engine,
wrapper load, scan, repair, show) in linear work: the whole size runs here, on a real
SQLite file and a real PostgreSQL store, and the first look's pairing check is held to
a count of comparisons."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from rich.console import Console

from langgraph_checkpoint_repair import PatchingCheckpointer, repair_messages
from langgraph_checkpoint_repair.batch import preview_thread, repair_threads
from langgraph_checkpoint_repair.batch.preview import ThreadPreview
from langgraph_checkpoint_repair.cli.show import CALLS_SHOWN, print_preview
from langgraph_checkpoint_repair.stores.first_look.plain import plain_history_is_clean
from tests.support.agents import chat_graph
from tests.support.seeding import config

CALLS = 30_000


def history(answered_every: int, size: int = CALLS) -> list[BaseMessage]:
    """A question, one AI message with `size` calls, a result for every `answered_every`-th."""
    calls = [{"name": "lookup", "args": {"n": n}, "id": f"c{n}"} for n in range(size)]
    results = [
        ToolMessage(f"r{n}", tool_call_id=f"c{n}", id=f"r{n}")
        for n in range(0, size, answered_every)
    ]
    return [HumanMessage("go", id="h"), AIMessage("", id="a", tool_calls=calls), *results]


def test_the_engine_answers_every_call_once() -> None:
    half = repair_messages([*history(2), HumanMessage("next", id="h2")])
    assert len(half.actions) == CALLS // 2
    answers = [m.tool_call_id for m in half.messages if isinstance(m, ToolMessage)]
    assert sorted(answers) == sorted(f"c{n}" for n in range(CALLS))
    assert not repair_messages(history(1)).changed


@pytest.fixture(params=["sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    if request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as sqlite:
            yield sqlite
    else:
        with PostgresSaver.from_conn_string(request.getfixturevalue("pg_uri")) as pg:
            pg.setup()
            yield pg


def test_every_path_takes_a_message_with_thirty_thousand_calls(
    saver: BaseCheckpointSaver[Any],
) -> None:
    chat = chat_graph(saver)
    chat.update_state(config("answered"), {"messages": history(1)}, as_node="chat")
    half = [*history(2), HumanMessage("next", id="h2")]
    chat.update_state(config("half"), {"messages": half}, as_node="chat")

    loaded = PatchingCheckpointer(saver).get_tuple(config("half"))
    assert loaded is not None
    assert len(loaded.checkpoint["channel_values"]["messages"]) == CALLS + 3

    preview = preview_thread(saver, "half")
    assert len(preview.actions) == CALLS // 2

    scan = repair_threads(saver, dry_run=True, min_idle=0)
    assert (scan.threads_scanned, scan.threads_needing_repair) == (2, 1)
    run = repair_threads(saver, min_idle=0)
    assert run.threads_repaired == 1
    assert run.actions == {"placeholder": CALLS // 2}
    assert repair_threads(saver, dry_run=True, min_idle=0).threads_needing_repair == 0


RENDERED = 3_000
"""Calls in the message `show` renders here: Rich lays out a table row in about a third
of a millisecond, linearly (benchmarks/bench_wide_message.py measures the growth)."""


def test_show_renders_a_wide_message_naming_a_few_calls() -> None:
    before = [*history(2, RENDERED), HumanMessage("next", id="h2")]
    repaired = repair_messages(before)
    preview = ThreadPreview(
        "t", "", "head", "messages", before, repaired.messages, repaired.actions, (), "would_repair"
    )
    shown = io.StringIO()
    print_preview(preview, Console(file=shown, width=200, highlight=False))
    assert f"and {RENDERED - CALLS_SHOWN:,} more" in shown.getvalue()
    assert f"a repair run would write these {RENDERED // 2} change(s)" in shown.getvalue()


class CountedId(str):
    """A call id that counts how often it is compared: the first look's work."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountedId.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_the_first_look_compares_each_id_a_bounded_number_of_times() -> None:
    calls = [{"id": CountedId(f"c{n}"), "name": "lookup"} for n in range(CALLS)]
    answers = reversed(range(CALLS))  # results may come back in any order
    results = [("ToolMessage", {"tool_call_id": CountedId(f"c{n}")}) for n in answers]
    decoded = [("HumanMessage", {}), ("AIMessage", {"tool_calls": calls}), *results]
    CountedId.comparisons = 0
    assert plain_history_is_clean(decoded)
    assert CountedId.comparisons <= 4 * CALLS
