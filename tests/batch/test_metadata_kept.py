"""Every checkpoint the tool writes keeps the thread's metadata, on all six real savers:
a bricked thread whose runs the Agent Server and the application tag (`graph_id`,
`assistant_id`, `user_id`, an app's own keys) keeps every key through `repair` and
through `undo`, with `source`, `step`, `parents` and the tool's keys set as always."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_checkpoint_repair.decisions.plan import (
    DETAIL_KEY,
    RUN_KEY,
    carried_metadata,
)
from tests.support.batch_runs import run_repair, run_undo
from tests.support.metadata import APP, SERVER, assert_carried, tagged
from tests.support.needs import DELTA_REASON
from tests.support.seeding import brick, config
from tests.support.stores import Store


async def head_metadata(store: Store, thread_id: str) -> dict[str, Any]:
    tup = await store.get_tuple(store.saver, config(thread_id))
    assert tup is not None
    return dict(tup.metadata)


async def test_repair_and_undo_keep_every_key_of_the_thread(store: Store) -> None:
    await brick(store, "owned", tagged("owned"))
    bricked = await head_metadata(store, "owned")
    assert SERVER.items() <= bricked.items() and APP.items() <= bricked.items()

    report = await run_repair(store)
    assert report.threads_repaired == 1
    repaired = await head_metadata(store, "owned")
    assert_carried(repaired, bricked, report.run_id)
    assert repaired[DETAIL_KEY]["kind"] == "repair"

    undone = await run_undo(store, report.run_id)
    assert undone.threads_restored == 1
    restored = await head_metadata(store, "owned")
    assert_carried(restored, repaired, undone.run_id)
    assert restored[DETAIL_KEY]["kind"] == "undo"


async def test_a_delta_thread_keeps_its_keys_and_restarts_the_snapshot_counter(
    store: Store,
) -> None:
    pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
    from tests.support.delta_agents import brick_delta_agent

    await brick_delta_agent(store, "deepagents", tagged("deep"))
    bricked = await head_metadata(store, "deep")
    report = await run_repair(store)
    assert report.threads_repaired == 1
    repaired = await head_metadata(store, "deep")
    assert_carried(repaired, bricked, report.run_id)
    counted = repaired.get("counters_since_delta_snapshot") or {}
    assert "messages" not in counted  # the repair stored a snapshot: it starts again


def test_the_tool_sets_its_own_keys_and_carries_the_rest() -> None:
    on = {
        **SERVER,
        "source": "loop",
        "step": 4,
        "parents": {"": "p"},
        RUN_KEY: "run-old",
        DETAIL_KEY: {"kind": "repair"},
        "counters_since_delta_snapshot": {"messages": [3, 3]},
    }
    written = carried_metadata(on, 5, {RUN_KEY: "run-new"})
    assert written == {
        **SERVER,
        "source": "update",
        "step": 5,
        "parents": {"": "p"},
        RUN_KEY: "run-new",
    }
    assert written["parents"] is not on["parents"]  # a copy: the head's stays as it is
    assert carried_metadata(None, 0, {}) == {"source": "update", "step": 0, "parents": {}}
