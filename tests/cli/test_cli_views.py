"""The operator's views on the command line: `show` before writing, `scan --list` for
other tools, and a progress bar with a total in a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from typing import Any

import pytest

from langgraph_checkpoint_repair import repair_messages
from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.batch.preview import message_dict
from langgraph_checkpoint_repair.cli.output import list_line
from langgraph_checkpoint_repair.decoding.strict import StrictSerializer
from langgraph_checkpoint_repair.delta import snapshot_value
from langgraph_checkpoint_repair.in_flight import work_is_scheduled
from langgraph_checkpoint_repair.stores.history import load_rebuilt
from langgraph_checkpoint_repair.targets import open_saver
from tests.cli.test_cli import last_json, run
from tests.support.cli_runs import child_env
from tests.support.factories import SQLITE_ENV
from tests.support.seeding import Seeded, config

SHOWN = ["bricked", "orphan", "misplaced", "in_flight", "clean"]


def expected_after(target: str, thread_id: str) -> list[dict[str, Any]]:
    """The engine's repair of the stored head, as `show --json` must print it."""
    with open_saver(target) as saver:
        stored = saver.get_tuple(config(thread_id))
        assert stored is not None
        tup, _ = load_rebuilt(saver, stored, ["messages"])
    messages = snapshot_value(tup.checkpoint["channel_values"]["messages"])
    repaired = repair_messages(messages, in_flight=work_is_scheduled(tup)).messages
    return json.loads(json.dumps([message_dict(m) for m in repaired], default=str))  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", SHOWN)
def test_show_json_is_the_engine_repair_of_the_head(target: tuple[str, Seeded], kind: str) -> None:
    uri, seeded = target
    thread_id = seeded.of(kind)[0]
    code, output = run("show", uri, "--thread", thread_id, "--json")
    assert code == 0
    shown = last_json(output)
    assert list(shown)[:6] == ["thread", "namespace", "checkpoint_id", "channel", "before", "after"]
    assert shown["thread"] == thread_id and shown["namespace"] == ""
    assert shown["after"] == expected_after(uri, thread_id)
    assert {k for m in shown["before"] for k in m} >= {"type", "content", "id", "tool_calls"}
    kinds = [a["kind"] for a in shown["actions"]]
    assert kinds == {"bricked": ["placeholder"], "orphan": ["orphan_dropped"],
                     "misplaced": ["moved"], "in_flight": [], "clean": []}[kind]  # fmt: skip
    assert shown["in_flight_calls"] == (["c1"] if kind == "in_flight" else [])


def test_show_prints_both_sides_and_marks_the_changes(
    target: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # as wide as a terminal: no cell is folded
    uri, seeded = target
    code, output = run("show", uri, "--thread", seeded.of("bricked")[0])
    assert code == 0
    placeholder = next(line for line in output.splitlines() if "tool: Tool call" in line)
    assert placeholder.split("│")[1].strip() == "+"
    assert "[synthetic]" in output
    assert "placeholder: call #c1 get_weather" in output
    assert "a repair run would write these 1 change(s)" in output
    code, output = run("show", uri, "--thread", seeded.of("in_flight")[0])
    assert "(in flight)" in output and "left to run: c1" in output


def test_show_reads_a_subgraph_namespace(target: tuple[str, Seeded]) -> None:
    uri, seeded = target
    code, output = run("show", uri, "--thread", seeded.of("subgraph")[0], "--ns", "researcher:1",
                       "--json")  # fmt: skip
    assert code == 0
    assert last_json(output)["namespace"] == "researcher:1"
    assert [a["kind"] for a in last_json(output)["actions"]] == ["placeholder"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--thread", "no-such-thread"], "no thread 'no-such-thread' in this store"),
        (["--thread", "clean", "--ns", "nowhere"], "no thread 'clean' in namespace 'nowhere'"),
        (["--thread", "clean", "--policy", "strict=maybe"], "strict"),
        ([], "the following arguments are required: --thread"),
    ],
)
def test_show_mistakes_are_one_line_exit_2(
    target: tuple[str, Seeded], argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    uri, _ = target
    code, output = run("show", uri, *argv)
    err = capsys.readouterr().err
    assert code == 2 and output == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_scan_list_prints_one_line_per_broken_head(target: tuple[str, Seeded]) -> None:
    uri, seeded = target
    code, output = run("scan", uri, "--min-idle", "0", "--list")
    assert code == 0
    rows = [line.split("\t") for line in output.splitlines()]
    assert all(len(row) == 4 for row in rows)
    summary = last_json(run("scan", uri, "--min-idle", "0", "--json")[1])
    broken = [t for t in summary["threads"] if t["actions"]]
    assert len(rows) == len(broken) == summary["threads_needing_repair"]
    by_thread = {(t["thread_id"], t["checkpoint_ns"]): t for t in broken}
    for thread_id, ns, checkpoint_id, codes in rows:
        listed = by_thread[(thread_id, ns)]
        assert checkpoint_id == listed["checkpoint_id"]
        kinds = {a.split(":")[0] for acts in listed["actions"].values() for a in acts}
        assert codes.split(",") == sorted(kinds)
    assert {row[0] for row in rows} == set(seeded.broken)


def test_scan_json_and_list_written_as_they_go_hold_what_a_kept_report_holds(
    target: tuple[str, Seeded],
) -> None:
    """The streamed output against the report of a run that keeps every head, as the
    command printed it before it streamed: the same fields, threads and lines."""
    uri, _ = target
    code, output = run("scan", uri, "--min-idle", "0", "--json")
    assert code == 0 and len(output.splitlines()) == 1
    streamed = json.loads(output)
    with open_saver(uri, read_only=True, serde=StrictSerializer()) as saver:
        kept = repair_threads(saver, dry_run=True, min_idle=0, waiting=True)
    expected = {**kept.to_json(), "threads": [t.to_json() for t in kept.threads]}
    for payload in (streamed, expected):
        del payload["run_id"]
        payload["threads"].sort(key=lambda t: (t["thread_id"], t["checkpoint_ns"]))
    assert streamed == expected and expected["threads"]

    code, output = run("scan", uri, "--min-idle", "0", "--list")
    assert code == 0
    lines = [line for line in map(list_line, kept.threads) if line is not None]
    assert sorted(output.splitlines()) == sorted(lines) and lines


def test_scan_list_and_json_together_are_a_usage_error(
    target: tuple[str, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run("scan", target[0], "--list", "--json")
    assert code == 2 and output == ""
    assert "--list and --json" in capsys.readouterr().err


def in_a_terminal(*argv: str, env: dict[str, str] | None = None) -> str:
    """Run the command with stdout and stderr on a real pseudo-terminal; all it printed."""
    leader, follower = pty.openpty()
    terminal = {"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    env = child_env(**terminal, **(env or {}))
    command = [sys.executable, "-m", "langgraph_checkpoint_repair.cli", *argv]
    process = subprocess.Popen(command, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the child is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("store", ["sqlite_target", "postgres_target"])
def test_progress_in_a_terminal_shows_a_total(store: str, request: pytest.FixtureRequest) -> None:
    uri, _ = request.getfixturevalue(store)
    scanned = in_a_terminal("scan", uri, "--min-idle", "0")
    assert "scanning" in scanned and "7/7" in scanned
    repaired = in_a_terminal("repair", uri, "--min-idle", "0")
    assert "repairing" in repaired and "7/7" in repaired and "5 repaired" in repaired


def test_progress_without_a_cheap_total_is_a_counter(sqlite_target: tuple[str, Seeded]) -> None:
    """A saver known only by its public API (here async-only): a spinner and a count."""
    path = sqlite_target[0].removeprefix("sqlite:///")
    env = {SQLITE_ENV: path}
    scanned = in_a_terminal(
        "scan", "tests.support.factories:async_only_saver", "--min-idle", "0", env=env
    )
    assert "scanning 7 heads" in scanned and "/7" not in scanned
