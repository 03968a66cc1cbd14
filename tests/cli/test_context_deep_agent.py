"""A real deep agent whose long single task overflows the model's window, on SQLite
and PostgreSQL: it runs again after `langgraph-repair repair` with the plain saver;
`scan`, `show` and `undo` say and do what an operator needs."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support import overflowing_deep_agent
from tests.support.cli_runs import last_json, postgres_rows, run_cli, sqlite_rows
from tests.support.context import markers, tokens
from tests.support.overflowing_deep_agent import THREAD, WINDOW, finish, history, overflow

target = overflowing_deep_agent.target  # the fixture: a plain saver and its TARGET

SETTINGS = ("--policy", "max_input_tokens=3000", "--min-idle", "0")


def rows(saver: BaseCheckpointSaver[Any], target: str) -> Any:
    if isinstance(saver, SqliteSaver):
        return sqlite_rows(Path(target.removeprefix("sqlite:///")))
    return postgres_rows(target)


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
