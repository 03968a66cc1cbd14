"""Retention on the threads a stock `create_deep_agent` writes, whose `files` channel is a
delta channel too: every thread left as it was has its reason, and a dry run makes
the real run's checks, so its counts and reasons are the real run's."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langchain_core.messages import HumanMessage

from tests.retention.test_prune_delta_threads import talked
from tests.support.agents import ToolBox
from tests.support.cli_runs import run_cli
from tests.support.delta_agents import deep_agent
from tests.support.fakes import calls, model
from tests.support.pruning import PrunedStore, prune, seen, stored_rows, thread
from tests.support.stores import cli_store


async def write_files(store: Any, thread_id: str, turns: int) -> Any:
    """A deep agent that writes one file a turn (no snapshot of `files` yet)."""
    for n in range(turns):
        write = calls(("write_file", f"w{n}"), file_path=f"/f{n}.txt", content=f"file {n}")
        agent = deep_agent(model(write, "Done."), ToolBox(), store.saver)
        await store.invoke(
            agent, {"messages": [HumanMessage(f"Write file {n}.")]}, thread(thread_id)
        )
    return deep_agent(model(), ToolBox(), store.saver)


def checkpoints_of(store: PrunedStore, thread_id: str) -> int:
    return sum(1 for row in stored_rows(store.reader)["checkpoints"] if row[0] == thread_id)


def counts(report: Any) -> dict[str, Any]:
    """What a prune reports, but for what tells a dry run from a real one."""
    found = report.to_json()
    return {k: v for k, v in found.items() if k not in ("run_id", "dry_run", "archived")}


async def test_a_plain_prune_of_a_young_deep_agent_says_why_and_what_compact_frees(
    store: PrunedStore,
) -> None:
    agent = await write_files(store, "deep", 3)
    before, rows = await seen(store, agent, thread("deep")), stored_rows(store.reader)
    total = checkpoints_of(store, "deep")

    report = await prune(store)

    assert report.threads_pruned == 0 and report.skipped == {"delta_chain": 1}
    assert report.compactable == total - 2  # the head and a snapshot under it stay
    assert report.to_json()["compactable_checkpoints"] == total - 2
    assert stored_rows(store.reader) == rows
    assert await seen(store, agent, thread("deep")) == before


async def test_a_compacting_dry_run_makes_the_real_runs_checks(store: PrunedStore) -> None:
    """A deep agent's `files` cannot be snapshotted here: the dry run no longer promises
    what the real run refuses; a messages-only delta thread is compacted by both."""
    agent = await write_files(store, "deep", 3)
    await talked(store, "chat", 7)
    before = await seen(store, agent, thread("deep"))
    rows = stored_rows(store.reader)

    dry = await prune(store, compact=True, dry_run=True)
    assert stored_rows(store.reader) == rows
    real = await prune(store, compact=True)

    assert counts(dry) == counts(real)
    assert real.threads_compacted == 1 and real.threads_pruned == 1  # the chat thread
    assert real.skipped == {"delta_not_compacted": 1}  # the deep agent, as it was
    assert await seen(store, agent, thread("deep")) == before
    write = calls(("write_file", "w9"), file_path="/f9.txt", content="file 9")
    going_on = deep_agent(model(write, "Done."), ToolBox(), store.saver)
    await store.invoke(going_on, {"messages": [HumanMessage("One more.")]}, thread("deep"))
    files = (await store.get_state(going_on, thread("deep"))).values["files"]
    assert {"/f0.txt", "/f1.txt", "/f2.txt", "/f9.txt"} <= set(files)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_summary_gives_each_reason_in_one_line(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        await write_files(store, "deep", 2)
        total = sum(1 for _ in store.saver.list(thread("deep")))
        plain = run_cli("prune", target, "--min-idle", "0", COLUMNS="200")
        compacting = run_cli("prune", target, "--min-idle", "0", "--compact", COLUMNS="200")
    assert plain.returncode == 0 and compacting.returncode == 0, plain.stderr + compacting.stderr
    said = [line for line in plain.stdout.splitlines() if line.startswith("skipped delta_chain:")]
    assert said == [
        "skipped delta_chain: its delta chains need every checkpoint it keeps: run with "
        f"--compact to free {total - 2:,} checkpoint(s)"
    ]
    reason = [line for line in compacting.stdout.splitlines() if line.startswith("skipped ")]
    assert len(reason) == 1 and reason[0].startswith("skipped delta_not_compacted: ")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_compact_with_the_agents_graph_on_the_command_line(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        agent = await write_files(store, "deep", 3)
        before = await seen(store, agent, thread("deep"))
        graph = ("--graph", "tests.support.delta_agents:stock_deep_agent")
        dry = run_cli(
            "prune", target, "--min-idle", "0", "--compact", *graph, "--dry-run", "--json"
        )
        done = run_cli("prune", target, "--min-idle", "0", "--compact", *graph, "--json")
        assert done.returncode == 0, done.stderr
        left = sum(1 for _ in store.saver.list(thread("deep")))
        assert left == 2 and await seen(store, agent, thread("deep")) == before
        wrong = run_cli("prune", target, "--compact", "--graph", "tests.support.nowhere:agent")
    assert counts_of(dry.stdout) == counts_of(done.stdout)
    assert json.loads(done.stdout)["threads_compacted"] == 1
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert wrong.stderr.count("\n") == 1 and "tests.support.nowhere" in wrong.stderr


def counts_of(printed: str) -> dict[str, Any]:
    found = json.loads(printed)
    return {k: v for k, v in found.items() if k not in ("run_id", "dry_run", "archived")}
