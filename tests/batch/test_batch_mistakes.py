"""Values that used to be accepted and silently wrong are clear TypeErrors or ValueErrors
when they are given; numbers of seconds work as `min_idle`; the write pacer's wait ends
as soon as the run is asked to stop, at any rate."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy
from langgraph_checkpoint_repair.batch import RunOptions, repair_threads
from langgraph_checkpoint_repair.batch.pacing import Pacer
from langgraph_checkpoint_repair.engine.policy import policy_from_settings
from tests.support.batch_runs import all_checkpoints, run_repair
from tests.support.seeding import seed
from tests.support.stores import Store

WRONG_POLICIES: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"strict": "no"}, TypeError, "strict must be a bool"),
    ({"strict": 1}, TypeError, "strict must be a bool"),
    ({"dangling": 1}, TypeError, "dangling"),
    ({"language": None}, TypeError, "language"),
    ({"placeholder": "{nope}"}, ValueError, "not a valid template"),
    ({"placeholder": "{0}"}, ValueError, "not a valid template"),
    ({"placeholder": "{name"}, ValueError, "not a valid template"),
    ({"placeholder": 3}, TypeError, "placeholder must be"),
]


@pytest.mark.parametrize(("fields", "error", "message"), WRONG_POLICIES)
def test_wrong_policy_values_are_refused(
    fields: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        RepairPolicy(**fields)


def test_good_templates_and_boolean_settings_are_accepted() -> None:
    assert RepairPolicy(placeholder="{name} ({id}) stopped: {reason}").placeholder
    assert policy_from_settings(["strict=TRUE"]).strict is True
    assert policy_from_settings(["strict=no"]).strict is False
    with pytest.raises(ValueError, match="not a boolean"):
        policy_from_settings(["strict=maybe"])


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"channels": "messages"}, TypeError),
        ({"channels": ["messages", 1]}, TypeError),
        ({"policy": "strict"}, TypeError),
    ],
)
def test_wrapper_refuses_wrong_arguments(arguments: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        PatchingCheckpointer(InMemorySaver(), **arguments)


WRONG_OPTIONS: list[tuple[dict[str, Any], type[Exception]]] = [
    ({"threads": "abc"}, TypeError),
    ({"threads": [1, 2]}, TypeError),
    ({"channels": "messages"}, TypeError),
    ({"channels": []}, ValueError),
    ({"min_idle": "10m"}, TypeError),
    ({"min_idle": -1}, ValueError),
    ({"min_idle": float("nan")}, ValueError),
    ({"min_idle": timedelta(days=999_999_999)}, ValueError),
    ({"max_writes_per_second": 0}, ValueError),
    ({"max_writes_per_second": -1}, ValueError),
    ({"max_writes_per_second": float("nan")}, ValueError),
    ({"max_writes_per_second": float("inf")}, ValueError),
    ({"max_writes_per_second": 1e-320}, ValueError),
    ({"max_writes_per_second": "5"}, TypeError),
    ({"concurrency": 0}, ValueError),
    ({"concurrency": 2.5}, TypeError),
    ({"limit": -1}, ValueError),
    ({"shard": (2, 2)}, ValueError),
    ({"dry_run": "yes"}, TypeError),
    ({"policy": {"strict": True}}, TypeError),
]


@pytest.mark.parametrize(("settings", "error"), WRONG_OPTIONS)
def test_wrong_run_options_are_refused_before_anything_is_read(
    settings: dict[str, Any], error: type[Exception]
) -> None:
    saver = InMemorySaver()
    with pytest.raises(error):
        repair_threads(saver, **settings)
    assert list(saver.list(None)) == []


async def test_threads_given_as_a_string_are_refused_not_matched_by_substring() -> None:
    store = Store(InMemorySaver(), is_async=False)
    seeded = await seed(store, bricked=1)
    before = await all_checkpoints(store)
    with pytest.raises(TypeError, match="sequence of strings"):
        repair_threads(store.saver, threads=seeded.of("bricked")[0], min_idle=0)
    assert await all_checkpoints(store) == before


async def test_min_idle_as_a_number_is_seconds() -> None:
    assert RunOptions(min_idle=600).min_idle == timedelta(minutes=10)
    store = Store(InMemorySaver(), is_async=False)
    seeded = await seed(store, bricked=1)
    waiting = await run_repair(store, min_idle=600)
    assert waiting.skipped["recent"] == len(seeded.broken)
    done = await run_repair(store, min_idle=0)
    assert done.threads_repaired == len(seeded.broken)


def stop_soon(stop: threading.Event) -> Callable[[], None]:
    """Set `stop` from another thread once the caller is waiting."""
    timer = threading.Timer(0.2, stop.set)
    timer.start()
    return timer.cancel


def test_the_pacer_wait_ends_when_the_run_is_stopped() -> None:
    stop = threading.Event()
    pacer = Pacer(1e-9, stop)  # one write per 31 years
    assert pacer.wait() is True  # the first write does not wait
    cancel = stop_soon(stop)
    assert pacer.wait() is False
    cancel()


async def test_the_async_pacer_wait_ends_when_the_run_is_stopped() -> None:
    stop = threading.Event()
    pacer = Pacer(1e-9, stop)
    assert await pacer.await_turn() is True
    cancel = stop_soon(stop)
    assert await asyncio.wait_for(pacer.await_turn(), timeout=60) is False
    cancel()
