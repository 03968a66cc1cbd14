"""A real deep agent whose long single task overflows the model's window, on SQLite
and PostgreSQL: every run fails with the provider's words; it runs again through
the wrapper, and after `langgraph-repair repair` with the plain saver; `scan`,
`show` and `undo` say and do what an operator needs."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deepagents import create_deep_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy
from tests.support.cli_runs import last_json, postgres_rows, run_cli, sqlite_rows
from tests.support.context import markers, read_file, reading_turns, tokens
from tests.support.fakes import ProviderRejected, WindowModel, window_model
from tests.support.seeding import config

WINDOW = 3000
SETTINGS = ("--policy", "max_input_tokens=3000", "--min-idle", "0")
TOO_LONG = "prompt is too long: .* tokens > 3000 maximum"
THREAD = "deep-task"


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    """A plain saver over a real store, and the TARGET the command line names it by."""
    if request.param == "sqlite":
        path = tmp_path / "threads.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            yield saver, f"sqlite:///{path}"
    else:
        uri = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
            yield saver, uri


def deep_agent(model: WindowModel, saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    graph: CompiledStateGraph[Any] = create_deep_agent(
        model=model, tools=[read_file], checkpointer=saver
    )
    return graph


def history(saver: BaseCheckpointSaver[Any]) -> list[BaseMessage]:
    """The head's history as LangGraph rebuilds it with the plain saver."""
    state = deep_agent(window_model(WINDOW), saver).get_state(config(THREAD))
    return list(state.values["messages"])


def overflow(saver: BaseCheckpointSaver[Any]) -> None:
    agent = deep_agent(window_model(WINDOW, *reading_turns(20)), saver)
    with pytest.raises(ProviderRejected, match=TOO_LONG):
        agent.invoke({"messages": [HumanMessage("Read the whole repository.")]}, config(THREAD))
    for attempt in ("Go on.", "Please go on."):  # every later run fails the same way
        again = deep_agent(window_model(WINDOW, "Done."), saver)
        with pytest.raises(ProviderRejected, match=TOO_LONG):
            again.invoke({"messages": [HumanMessage(attempt)]}, config(THREAD))


def finish(saver: BaseCheckpointSaver[Any]) -> WindowModel:
    """One more turn; returns the model, which saw the history sent."""
    model = window_model(WINDOW, "Done.")
    out = deep_agent(model, saver).invoke({"messages": [HumanMessage("Finish.")]}, config(THREAD))
    assert out["messages"][-1].content == "Done."
    return model


def rows(saver: BaseCheckpointSaver[Any], target: str) -> Any:
    if isinstance(saver, SqliteSaver):
        return sqlite_rows(Path(target.removeprefix("sqlite:///")))
    return postgres_rows(target)


def test_it_runs_through_the_wrapper(target: tuple[Any, str]) -> None:
    saver, _ = target
    overflow(saver)
    model = finish(PatchingCheckpointer(saver, policy=RepairPolicy(max_input_tokens=WINDOW)))
    seen = model.received[-1]
    assert tokens(seen) <= WINDOW and len(markers(seen)) == 1
    assert seen[-1].content == "Finish."


def test_it_runs_after_repair_with_the_plain_saver_and_undo_restores_it(
    target: tuple[Any, str],
) -> None:
    saver, url = target
    overflow(saver)
    before = [m.model_dump() for m in history(saver)]
    assert tokens(history(saver)) > WINDOW

    listed = run_cli("scan", url, "--list", *SETTINGS)
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.strip().splitlines()
    assert line.split("\t")[0] == THREAD and line.split("\t")[-1] == "context_trimmed"
    scanned = last_json(run_cli("scan", url, "--json", *SETTINGS).stdout)
    (thread,) = scanned["threads"]
    estimate = thread["tokens"]["messages"]
    assert estimate["before"] > WINDOW >= estimate["after"]

    repaired = run_cli("repair", url, "--json", *SETTINGS)
    assert repaired.returncode == 0, repaired.stderr
    report = last_json(repaired.stdout)
    assert report["threads_repaired"] == 1 and report["actions"] == {"context_trimmed": 1}
    trimmed = history(saver)
    assert tokens(trimmed) <= WINDOW * 9 // 10 and len(markers(trimmed)) == 1
    assert run_cli("scan", url, "--json", *SETTINGS).stdout.count('"threads_needing_repair": 0')

    undone = run_cli("undo", url, "--run", report["run_id"], "--json")
    assert undone.returncode == 0, undone.stderr
    assert [m.model_dump() for m in history(saver)] == before

    assert run_cli("repair", url, *SETTINGS).returncode == 0
    model = finish(saver)
    assert tokens(model.received[-1]) <= WINDOW


def test_show_prints_the_removed_span_as_one_line(target: tuple[Any, str]) -> None:
    saver, url = target
    overflow(saver)
    argv = ("show", url, "--thread", THREAD, "--policy", "max_input_tokens=3000")
    shown = run_cli(*argv, COLUMNS="300")
    assert shown.returncode == 0, shown.stderr
    removed = [line for line in shown.stdout.splitlines() if "messages removed (" in line]
    assert len(removed) == 1 and "tokens)" in removed[0]
    assert shown.stdout.count("answers #r0") == 0  # the oldest results are not listed
    assert "context_trimmed" in shown.stdout and "tokens: " in shown.stdout


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        (("--policy", "max_input_tokens=lots"), "not a number of tokens"),
        (("--policy", "max_input_tokens=0"), "must be positive"),
        (("--policy", "max_input_tokens=100", "--policy", "context_reserve=100"), "below"),
        (("--policy", "context_reserve=100"), "needs a context window"),
        (("--policy", "token_counter=len"), "token_counter is a Python callable"),
    ],
)
def test_a_mistake_in_the_budget_is_one_line_and_writes_nothing(
    target: tuple[Any, str], settings: tuple[str, ...], says: str
) -> None:
    saver, url = target
    overflow(saver)
    stored = rows(saver, url)
    done = run_cli("repair", url, *settings, "--min-idle", "0")
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert says in line and "Traceback" not in done.stderr
    assert rows(saver, url) == stored
