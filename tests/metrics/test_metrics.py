"""Repair counts on OpenTelemetry metrics, read back through the real SDK: wrapped
loads on real savers, the batch job on real stores, both in-run helpers; and the
package without OpenTelemetry installed."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs opentelemetry-sdk (the dev extra)")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from langgraph_checkpoint_repair.batch import prune_threads, repair_threads
from langgraph_checkpoint_repair.decisions.plan import shard_of
from langgraph_checkpoint_repair.decoding.finders import module_findable
from langgraph_checkpoint_repair.metrics import (
    ACTIONS,
    LOST_TYPES,
    METER,
    PRUNED_ROWS,
    REPAIRS,
    WAITING_HEADS,
)
from tests.support.agents import ToolBox, chat_graph, thread
from tests.support.asking_graphs import answer_first, build
from tests.support.asking_graphs import thread as asking_thread
from tests.support.batch_runs import run_repair
from tests.support.fakes import calls, model
from tests.support.histories import ai, human, tool
from tests.support.in_run_agents import agent, hooked_agent
from tests.support.seeding import brick, config, seed
from tests.support.stores import Store, open_store
from tests.support.waiting_threads import WAITING, seed_waiting

Point = tuple[str, frozenset[tuple[str, Any]]]
ATTRIBUTES = {"surface", "channel", "action", "table"}
ASK = {"messages": [HumanMessage("Weather in Paris?")]}
CHANGE = {"messages": [HumanMessage("Never mind, tell me a joke.")]}
MIXED = [
    human("a"),
    ai("a1", "c1", "c2", "c4"),
    tool("c1"),
    human("b"),
    tool("zz"),
    ai("a2", "c3"),
    human("c"),
    tool("c3"),
]
"""Two calls without results, an orphan result and a misplaced one."""
MIXED_KINDS = {"placeholder": 2, "orphan_dropped": 1, "moved": 1}


@pytest.fixture(scope="module")
def reader() -> InMemoryMetricReader:
    """The process's global meter provider (settable once), reading into memory."""
    found = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[found])
    metrics.set_meter_provider(provider)
    assert metrics.get_meter_provider() is provider, "a meter provider was set before"
    return found


def counts(reader: InMemoryMetricReader) -> Counter[Point]:
    """Cumulative counts on the package's meter, by metric name and attributes."""
    found: Counter[Point] = Counter()
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != METER:
                continue
            for metric in scope.metrics:
                if metric.name == WAITING_HEADS:  # a gauge: read by `gauge`
                    continue
                for point in metric.data.data_points:
                    found[(metric.name, frozenset((point.attributes or {}).items()))] += int(
                        point.value  # type: ignore[union-attr]
                    )
    return found


def gauge(reader: InMemoryMetricReader) -> dict[frozenset[tuple[str, Any]], int]:
    """The waiting-heads gauge's values as the reader collects them now, by attributes."""
    data = reader.get_metrics_data()
    return {
        frozenset((point.attributes or {}).items()): int(point.value)  # type: ignore[union-attr]
        for resource in (data.resource_metrics if data else ())
        for scope in resource.scope_metrics
        if scope.scope.name == METER
        for metric in scope.metrics
        if metric.name == WAITING_HEADS
        for point in metric.data.data_points
    }


def taken(reader: InMemoryMetricReader, before: Counter[Point]) -> Counter[Point]:
    """Counts recorded since `before`; every attribute is one of the bounded few."""
    delta = counts(reader) - before
    for _, attributes in delta:
        assert {key for key, _ in attributes} <= ATTRIBUTES
    return delta


def expected(surface: str, kinds: dict[str, int], repairs: int = 1) -> Counter[Point]:
    channel = ("channel", "messages")
    found: Counter[Point] = Counter(
        {(REPAIRS, frozenset({("surface", surface), channel})): repairs}
    )
    for kind, count in kinds.items():
        key = frozenset({("action", kind), ("surface", surface), channel})
        found[(ACTIONS, key)] = count
    return found


def no_thread_ids(delta: Counter[Point], *thread_ids: str) -> None:
    values = {str(value) for _, attributes in delta for _, value in attributes}
    assert not values & set(thread_ids)


async def test_wrapped_load_of_bricked_thread_counts_a_load_repair(
    store: Store, reader: InMemoryMetricReader
) -> None:
    await brick(store, "bricked")
    wrapped = PatchingCheckpointer(store.saver)
    before = counts(reader)

    loaded = await store.get_tuple(wrapped, config("bricked"))

    assert loaded is not None
    delta = taken(reader, before)
    assert delta == expected("load", {"placeholder": 1})
    no_thread_ids(delta, "bricked")


async def test_wrapped_load_counts_each_action_by_kind(
    store: Store, reader: InMemoryMetricReader
) -> None:
    await store.update_state(chat_graph(store.saver), config("mixed"), {"messages": MIXED}, "chat")
    wrapped = PatchingCheckpointer(store.saver)
    before = counts(reader)

    await store.get_tuple(wrapped, config("mixed"))
    await store.get_tuple(wrapped, config("mixed"))  # each repaired load counts

    assert taken(reader, before) == expected(
        "load", {k: 2 * n for k, n in MIXED_KINDS.items()}, repairs=2
    )


async def test_clean_load_counts_nothing(store: Store, reader: InMemoryMetricReader) -> None:
    box, saver = ToolBox(), store.saver
    graph = agent(model(calls(("get_weather", "c1"), city="Oslo"), "Sunny."), box, store)
    await store.invoke(graph, ASK, config("clean"))
    wrapped = PatchingCheckpointer(saver)
    before = counts(reader)

    loaded = await store.get_tuple(wrapped, config("clean"))
    await store.list(wrapped, config("clean"))

    assert loaded is not None
    assert taken(reader, before) == Counter()


@pytest.mark.parametrize("kind", ["sqlite", "apostgres"])
async def test_batch_counts_heads_repaired_and_no_dry_run(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, reader: InMemoryMetricReader
) -> None:
    async with open_store(kind, tmp_path, request) as store:
        seeded = await seed(store)
        before = counts(reader)
        dry = await run_repair(store, dry_run=True)
        assert dry.threads_repaired == len(seeded.broken)  # would be: nothing written
        assert taken(reader, before) == Counter()

        report = await run_repair(store)

    delta = taken(reader, before)
    assert report.threads_repaired == len(seeded.broken)
    batch = frozenset({("surface", "batch"), ("channel", "messages")})
    assert delta[(REPAIRS, batch)] == report.threads_repaired
    actions = sum(n for (name, _), n in delta.items() if name == ACTIONS)
    assert actions >= report.threads_repaired
    assert {dict(attributes)["surface"] for _, attributes in delta} == {"batch"}
    no_thread_ids(delta, *seeded.of("bricked", "orphan", "misplaced", "subgraph", "clean"))


@pytest.mark.parametrize("kind", ["sqlite", "apostgres"])
async def test_middleware_counts_each_model_call_repaired(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, reader: InMemoryMetricReader
) -> None:
    async with open_store(kind, tmp_path, request) as store:
        replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
        graph = agent(replies, ToolBox(), store, RepairToolCallsMiddleware())
        config = thread()
        before = counts(reader)
        await store.invoke(graph, ASK, config)
        assert taken(reader, before) == Counter()  # a clean history: nothing

        await store.invoke(graph, CHANGE, config)

    delta = taken(reader, before)
    assert delta == expected("in_run", {"placeholder": 1})
    no_thread_ids(delta, config["configurable"]["thread_id"])


@pytest.mark.parametrize("persist", [False, True])
async def test_pre_model_hook_counts_each_model_call_repaired(
    persist: bool, tmp_path: Path, request: pytest.FixtureRequest, reader: InMemoryMetricReader
) -> None:
    async with open_store("sqlite", tmp_path, request) as store:
        replies = model(calls(("get_weather", "c1"), city="Paris"), "A joke.")
        graph = hooked_agent(replies, ToolBox(), store, "v2", persist=persist)
        config = thread()
        before = counts(reader)
        await store.invoke(graph, ASK, config)
        assert taken(reader, before) == Counter()

        await store.invoke(graph, CHANGE, config)

    assert taken(reader, before) == expected("in_run", {"placeholder": 1})


async def test_meter_carries_the_package_version(
    store: Store, reader: InMemoryMetricReader
) -> None:
    await brick(store, "bricked")
    await store.get_tuple(PatchingCheckpointer(store.saver), config("bricked"))

    data = reader.get_metrics_data()
    scopes = [
        scope.scope
        for resource in (data.resource_metrics if data else ())
        for scope in resource.scope_metrics
        if scope.scope.name == METER
    ]
    assert {scope.version for scope in scopes} == {version("langgraph-checkpoint-repair")}


BRICKED_LOAD = """
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_checkpoint_repair import PatchingCheckpointer

    saver = InMemorySaver()
    checkpoint = empty_checkpoint()
    call = {"name": "get_weather", "args": {}, "id": "c1"}
    history = [HumanMessage("a"), AIMessage("", tool_calls=[call]), HumanMessage("b")]
    checkpoint["channel_values"] = {"messages": history}
    checkpoint["channel_versions"] = {"messages": saver.get_next_version(None, None)}
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saver.put(config, checkpoint, {"source": "input", "step": 0}, checkpoint["channel_versions"])
    wrapped = PatchingCheckpointer(saver)

    def load():
        messages = wrapped.get_tuple(config).checkpoint["channel_values"]["messages"]
        return [m.type for m in messages]
"""


BLOCKED = """
    import sys
    from tests.support.cli_child import NotInstalled

    sys.meta_path.insert(0, NotInstalled(["opentelemetry"]))  # before the package loads
"""


def run_child(script: str, before: str = "") -> Any:
    """Run `script` after a bricked thread's wrapped `load` in a fresh interpreter
    (from the project root, `before` first); its last line is JSON."""
    code = "".join(textwrap.dedent(part) for part in (before, BRICKED_LOAD, script))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_global_provider_set_after_first_repair_gets_the_counts() -> None:
    """The counters are made at the first repair, before the application sets its
    provider; the API's proxy meter hands later records to that provider."""
    found = run_child(
        """
        import json
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        load()  # no provider yet: recorded nowhere
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        load()
        load()
        points = [
            [metric.name, dict(point.attributes), point.value]
            for resource in reader.get_metrics_data().resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            for point in metric.data.data_points
        ]
        print(json.dumps(points))
        """
    )
    assert sorted(found, key=str) == sorted(
        [
            [REPAIRS, {"surface": "load", "channel": "messages"}, 2],
            [ACTIONS, {"action": "placeholder", "surface": "load", "channel": "messages"}, 2],
        ],
        key=str,
    )


def test_without_opentelemetry_repairs_and_never_imports_it() -> None:
    found = run_child(
        """
        import json
        from datetime import timedelta
        from langgraph_checkpoint_repair import metrics as repair_metrics
        from langgraph_checkpoint_repair import pre_model_hook
        from langgraph_checkpoint_repair.batch import repair_threads

        types = load()
        hooked = pre_model_hook()({"messages": wrapped.saver.get_tuple(config).checkpoint[
            "channel_values"]["messages"]})
        report = repair_threads(saver, min_idle=timedelta(0))
        loaded = [name for name in sys.modules if name.split(".")[0] == "opentelemetry"]
        print(json.dumps([types, len(hooked["llm_input_messages"]), report.threads_repaired,
                          loaded, repair_metrics._absent]))
        """,
        before=BLOCKED,
    )
    assert found == [["human", "ai", "tool", "human"], 4, 1, [], True]


class OrderState(TypedDict):
    order: Any


async def test_each_load_of_a_lost_type_counts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: InMemoryMetricReader
) -> None:
    """A class whose module is gone by the next load: one count per load, no thread id."""
    name = f"shop_gone_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Order:\n    id: str\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    order = importlib.import_module(name).Order("o-1")
    saver = InMemorySaver()
    builder = StateGraph(OrderState)
    builder.add_node("place", lambda state: {"order": order})
    builder.add_edge(START, "place")
    builder.compile(checkpointer=saver).invoke({"order": None}, config("gone"))
    (tmp_path / f"{name}.py").unlink()
    sys.modules.pop(name)
    importlib.invalidate_caches()
    module_findable.cache_clear()
    wrapped = PatchingCheckpointer(saver)
    before = counts(reader)

    wrapped.get_tuple(config("gone"))
    wrapped.get_tuple(config("gone"))

    delta = taken(reader, before)
    assert delta == Counter({(LOST_TYPES, frozenset({("surface", "load")})): 2})
    no_thread_ids(delta, "gone")


async def test_a_stale_answer_left_out_of_a_load_counts_one_resume_dropped(
    store: Store, reader: InMemoryMetricReader
) -> None:
    await answer_first(store, build("one_task", store.saver), "one_task", asking_thread("w"))
    wrapped = PatchingCheckpointer(store.saver)
    before = counts(reader)

    loaded = await store.get_tuple(wrapped, asking_thread("w"))

    assert loaded is not None
    resume = ("channel", "__resume__")
    assert taken(reader, before) == Counter(
        {
            (REPAIRS, frozenset({("surface", "load"), resume})): 1,
            (ACTIONS, frozenset({("action", "resume_dropped"), ("surface", "load"), resume})): 1,
        }
    )


async def test_a_whole_waiting_scan_sets_the_gauge_of_waiting_heads_by_age(
    reader: InMemoryMetricReader,
) -> None:
    saver = InMemorySaver()
    await seed_waiting(Store(saver, is_async=False))
    now = datetime.now(timezone.utc)

    repair_threads(saver, dry_run=True, waiting=True, started=now + timedelta(days=2))
    two_days = gauge(reader)
    repair_threads(saver, dry_run=True, waiting=True, started=now + timedelta(days=9))
    nine_days = gauge(reader)
    repair_threads(saver, dry_run=True, waiting=True, shard=(0, 2))
    sharded = gauge(reader)

    def idle(bucket: str) -> frozenset[tuple[str, Any]]:
        return frozenset({("idle", bucket)})

    assert two_days[idle("1d_to_7d")] == len(WAITING) and two_days[idle("7d_or_more")] == 0
    assert nine_days[idle("7d_or_more")] == len(WAITING) and nine_days[idle("1d_to_7d")] == 0
    in_shard = sum(1 for thread_id in WAITING if shard_of(thread_id, 2) == 0)
    assert sharded[frozenset({("idle", "under_1h"), ("shard", "0/2")})] == in_shard
    assert sharded[idle("7d_or_more")] == len(WAITING)  # the whole store's, unchanged
    assert not {str(value) for key in sharded for _, value in key} & WAITING


async def test_prune_counts_the_rows_it_deleted_by_table_and_no_dry_run(
    tmp_path: Path, request: pytest.FixtureRequest, reader: InMemoryMetricReader
) -> None:
    async with open_store("sqlite", tmp_path, request) as store:
        graph = chat_graph(store.saver)
        for turn in range(3):
            graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config("pruned"))
        before = counts(reader)
        prune_threads(store.saver, min_idle=0, dry_run=True)
        assert taken(reader, before) == Counter()
        report = prune_threads(store.saver, min_idle=0)
    delta = taken(reader, before)
    rows = report.deleted.rows
    assert delta == Counter(
        {
            (PRUNED_ROWS, frozenset({("table", table), ("surface", "batch")})): rows[table]
            for table in ("checkpoints", "writes")
        }
    )
    no_thread_ids(delta, "pruned")
