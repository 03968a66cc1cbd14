"""A stored key the new release lacks, on a graph without compiled interrupts, traps
nothing: the new release simply never reads it (a reviewer's notes kept under a removed
key are forgotten). The check says so (`channel_ignored`, in `show --graph` and
`--json`) and the gate still passes: nothing is stranded."""

from __future__ import annotations

import pytest
from langgraph.types import Command

from tests.support.cli_runs import last_json, run_cli
from tests.support.release_graphs import asking, release_2_slim_asking
from tests.support.stores import cli_store

GRAPH = "tests.support.release_graphs:release_2_slim_asking"
THREAD = {"configurable": {"thread_id": "notes"}}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_removed_key_holding_a_value_is_said_and_passes_the_gate(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with cli_store(kind, request) as (target, store):
        old = asking().compile(checkpointer=store.saver)
        await store.invoke(old, {"topic": "x", "extra": "the reviewer's notes"}, THREAD)
        gate = run_cli("scan", target, "--graph", GRAPH, "--min-idle", "0", "--json")
        assert gate.returncode == 0, gate.stderr
        found = last_json(gate.stdout)
        assert found["findings"] == {"channel_ignored": 1}
        assert found["threads_needing_repair"] == 0

        shown = run_cli("show", target, "--thread", "notes", "--graph", GRAPH, "--json")
        (finding,) = last_json(shown.stdout)["findings"]
        assert (finding["code"], finding["channel"]) == ("channel_ignored", "extra")
        assert "is ignored" in finding["error"]

        new = release_2_slim_asking.copy(update={"checkpointer": store.saver})
        done = await store.invoke(new, Command(resume="yes"), THREAD)
        assert "extra" not in done  # what the check said: the new release never reads it
