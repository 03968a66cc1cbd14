"""The store contract: what every driver promises, run on every driver.

Each entry of `DRIVERS` opens a real saver (sync and async where the driver has both)
and says what its driver supports; every test below runs on each of them, through
the batch job's public API: the registry names the driver, a look writes nothing, a
repair appends and undo puts the heads back, a claimed head is left alone, a thread
in a format the saver cannot write is reported and left, a stale answer and text
holding U+0000 are handled as the driver says it can, and what a driver cannot do
it reports rather than guesses. Adding a driver is a line here (see the architecture
page's recipe).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import ainventory_types, inventory_types
from langgraph_checkpoint_repair.stores import astore_for, store_for
from langgraph_checkpoint_repair.stores.claims import claim
from langgraph_checkpoint_repair.stores.drivers import driver_for
from langgraph_checkpoint_repair.stores.generic import NoStoredBytes
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.asking_graphs import answer_first, asked, build, thread
from tests.support.batch_runs import all_checkpoints, head_messages, run_repair, run_undo
from tests.support.integrity_threads import NUL_TEXT, nul_graph
from tests.support.oracle import assert_valid
from tests.support.postgres_threads import hold_claim
from tests.support.seeding import SUBGRAPH_HISTORY, config, seed
from tests.support.stores import Store, open_store


@dataclass(frozen=True)
class Driver:
    """How to open a real saver for one driver, and what that driver supports."""

    opened: str
    """`open_store`'s kind, or `target` for a saver opened from a TARGET string."""
    is_async: bool
    driver: str
    """The registry's name for the driver (`stores.drivers.DRIVERS`)."""
    on: str = ""
    """For a TARGET: "postgres", "sqlite" or "redis"."""
    stored_bytes: bool = True
    """It shows stored bytes: `types`, the integrity findings, rewinds."""
    rewrites_writes: bool = True
    """It changes pending writes in place (a stale answer deleted, U+0000 rewritten)."""
    nul_matters: bool = False
    """Its saver cannot store U+0000 in text (PostgreSQL's JSONB)."""
    writes_langgraph_js: bool = False
    """It writes a thread counted in integers (LangGraph.js's) in that thread's format."""
    versions_as_text: bool = False
    """Its saver stores every version as text (Redis's): a thread put with integers is
    stored in the saver's own format."""
    replaces_heads: bool = False
    """A repair replaces the head's document, its bytes kept for undo (the shallow Redis
    savers keep no history to append to)."""
    python_threads: bool = True
    """It stores the threads LangGraph (Python) writes. LangGraph.js's Redis layout holds
    LangGraph.js's alone, so its contract is run with the LangGraph.js application
    (`test_redis_js`); only what needs no thread runs here."""


REDIS_TARGET = Driver(
    "target", False, "redis", "redis", stored_bytes=False, rewrites_writes=False,
    versions_as_text=True,
)  # fmt: skip
SHALLOW_REDIS = replace(
    REDIS_TARGET, opened="redis-shallow", driver="redis-shallow", replaces_heads=True
)
JS_REDIS = replace(REDIS_TARGET, opened="redis-js", driver="redis-js", python_threads=False)
DRIVERS = [
    Driver("postgres", False, "postgres", nul_matters=True),
    Driver("apostgres", True, "postgres", nul_matters=True),
    Driver("target", False, "js-postgres", "postgres", nul_matters=True, writes_langgraph_js=True),
    Driver("target", True, "js-postgres", "postgres", nul_matters=True, writes_langgraph_js=True),
    Driver("sqlite", False, "sqlite"),
    Driver("aiosqlite", True, "sqlite"),
    Driver("target", False, "sqlite", "sqlite", writes_langgraph_js=True),
    REDIS_TARGET,
    replace(REDIS_TARGET, is_async=True),
    SHALLOW_REDIS,
    replace(SHALLOW_REDIS, is_async=True),
    JS_REDIS,
    replace(JS_REDIS, is_async=True),
    Driver("memory", False, "generic", stored_bytes=False, rewrites_writes=False),
    Driver("amemory", True, "generic", stored_bytes=False, rewrites_writes=False),
]


def named(driver: Driver) -> str:
    how = "async" if driver.is_async else "sync"
    saver = f"{driver.on} target" if driver.opened == "target" else driver.opened
    saver = f"{driver.opened} saver" if driver.opened.startswith("redis-") else saver
    return f"{driver.driver}-{saver}-{how}"


@contextlib.asynccontextmanager
async def opened_target(driver: Driver, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if driver.on == "postgres":
        target = request.getfixturevalue("pg_uri")
    elif driver.on == "redis":
        pytest.importorskip("langgraph.checkpoint.redis", reason="needs the redis extra")
        target = request.getfixturevalue("redis_url")
    else:
        target = f"sqlite:///{request.getfixturevalue('tmp_path') / 'threads.sqlite'}"
    if driver.is_async:
        async with aopen_saver(target, setup=True) as asaver:
            yield Store(asaver, is_async=True)
    else:
        with open_saver(target, setup=True) as saver:
            yield Store(saver, is_async=False)


@contextlib.asynccontextmanager
async def opened_layout(driver: Driver, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """A Redis driver's own saver of a layout a TARGET opens only once the store holds
    it (the shallow savers', LangGraph.js's), over an empty server."""
    pytest.importorskip("langgraph.checkpoint.redis", reason="needs the redis extra")
    from langgraph_checkpoint_repair.stores.redis import js_saver, shallow_saver

    url = request.getfixturevalue("redis_url")
    if driver.opened == "redis-js":
        saver: Any = (js_saver.AsyncJsRedisSaver if driver.is_async else js_saver.JsRedisSaver)(url)
        yield Store(saver, is_async=driver.is_async)
    elif driver.is_async:
        async with shallow_saver.AsyncShallowRedisStoreSaver(redis_url=url) as asaver:
            yield Store(asaver, is_async=True)
    else:
        with shallow_saver.ShallowRedisStoreSaver.from_conn_string(url) as sync_saver:
            sync_saver.setup()
            yield Store(sync_saver, is_async=False)


NO_THREAD = {"test_the_registry_names_the_driver"}
"""The tests that run on a layout holding no LangGraph (Python) thread."""


@pytest.fixture(params=DRIVERS, ids=named)
async def case(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Driver, Store]]:
    driver: Driver = request.param
    if not driver.python_threads and request.node.name.split("[")[0] not in NO_THREAD:
        pytest.skip("this layout holds LangGraph.js's threads alone: see test_redis_js")
    if driver.opened.startswith("redis-"):
        async with opened_layout(driver, request) as store:
            yield driver, store
    elif driver.opened == "target":
        async with opened_target(driver, request) as store:
            yield driver, store
    else:
        async with open_store(driver.opened, tmp_path, request) as store:
            yield driver, store


@contextlib.contextmanager
def claimed_by_another_run(
    driver: Driver, store: Store, thread_id: str, request: pytest.FixtureRequest
) -> Iterator[None]:
    """The thread's claim, held as another run holds it: on PostgreSQL its advisory lock
    from another session (any process), elsewhere the claim of a run sharing the saver."""
    if driver.nul_matters:
        with psycopg.connect(request.getfixturevalue("pg_uri"), autocommit=True) as conn:
            hold_claim(conn, thread_id)
            yield
        return
    with claim(store.saver, (thread_id, "")):
        yield


def test_every_driver_is_in_the_contract() -> None:
    from langgraph_checkpoint_repair.stores.drivers import DRIVERS as REGISTERED

    assert {d.driver for d in DRIVERS} == set(REGISTERED)


async def test_the_registry_names_the_driver(case: tuple[Driver, Store]) -> None:
    driver, store = case
    found = driver_for(store.saver)
    assert found.name == driver.driver
    made = astore_for(store.saver) if store.is_async else store_for(store.saver)
    assert type(made).__name__ == (found.astore if store.is_async else found.store)
    assert (made.rewrites_writes, made.nul_matters) == (driver.rewrites_writes, driver.nul_matters)


async def test_a_look_writes_nothing_and_a_repair_is_undone(case: tuple[Driver, Store]) -> None:
    driver, store = case
    seeded = await seed(store, bricked=2)
    before = await all_checkpoints(store)
    originals = {t: await head_messages(store, t) for t in seeded.of("bricked", "orphan")}

    looked = await run_repair(store, dry_run=True)
    assert looked.threads_needing_repair == len(seeded.broken)
    assert await all_checkpoints(store) == before

    repaired = await run_repair(store)
    assert repaired.threads_repaired == len(seeded.broken)
    for thread_id in originals:
        assert_valid(await head_messages(store, thread_id))
    if driver.replaces_heads:  # each namespace's one document, replaced
        assert {k[:2] for k in before} == {k[:2] for k in await all_checkpoints(store)}
    else:
        assert set(before) < set(await all_checkpoints(store))  # appended: nothing rewritten
    assert (await run_repair(store)).threads_needing_repair == 0

    undone = await run_undo(store, repaired.run_id)
    assert undone.threads_restored == len(seeded.broken)
    for thread_id, messages in originals.items():
        assert await head_messages(store, thread_id) == messages


async def test_a_claimed_head_is_left_alone(
    case: tuple[Driver, Store], request: pytest.FixtureRequest
) -> None:
    driver, store = case
    seeded = await seed(store, bricked=1)
    held = seeded.of("bricked")[0]
    with claimed_by_another_run(driver, store, held, request):
        report = await run_repair(store)
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes[held] == "claimed"
    assert report.threads_repaired == len(seeded.broken) - 1
    assert (await run_repair(store)).threads_repaired == 1  # the claim gone, it is repaired


async def put_counted_in_integers(store: Store, thread_id: str) -> None:
    """A broken head counted as LangGraph.js counts its versions, put by the saver."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": SUBGRAPH_HISTORY}
    checkpoint["channel_versions"] = {"messages": 3}
    metadata: Any = {"source": "loop", "step": 1}
    if store.is_async:
        await store.saver.aput(config(thread_id), checkpoint, metadata, {"messages": 3})
    else:
        store.saver.put(config(thread_id), checkpoint, metadata, {"messages": 3})


async def test_a_format_the_saver_cannot_write_is_reported_and_left(
    case: tuple[Driver, Store],
) -> None:
    driver, store = case
    await put_counted_in_integers(store, "counted")
    before = await all_checkpoints(store)
    if driver.versions_as_text:
        head = await store.get_tuple(store.saver, config("counted"))
        assert head is not None and head.checkpoint["channel_versions"]["messages"] == "3"

    report = await run_repair(store)

    outcome = {t.thread_id: t.outcome for t in report.threads}["counted"]
    if driver.writes_langgraph_js or driver.versions_as_text:
        assert outcome == "repaired"
        assert_valid(await head_messages(store, "counted"))
    else:
        assert outcome == "foreign_format"
        assert await all_checkpoints(store) == before


async def test_a_stale_answer_is_dropped_where_writes_can_change(
    case: tuple[Driver, Store],
) -> None:
    driver, store = case
    graph = build("one_task", store.saver)
    await answer_first(store, graph, "one_task", thread("stale"))

    report = await run_repair(store)

    if driver.rewrites_writes:
        assert report.actions["resume_dropped"] == 1 and report.writes_rewritten == 1
        assert (await run_repair(store, dry_run=True)).threads_needing_repair == 0
        undone = await run_undo(store, report.run_id)
        assert undone.writes_restored == 1  # its row back, byte for byte
    else:  # the answer is left where it is: nothing is written on a guess
        assert report.writes_rewritten == 0 and report.actions["resume_dropped"] == 0
    resumed = await store.invoke(graph, Command(resume="no"), thread("stale"))
    assert asked(resumed) or "out" in resumed  # the thread runs on either way


async def test_text_holding_nul_is_rewritten_where_the_store_refuses_it(
    case: tuple[Driver, Store],
) -> None:
    driver, store = case
    graph = nul_graph(store.saver)
    try:
        await store.invoke(graph, {"text": "start"}, config("nul"))
    except psycopg.errors.UntranslatableCharacter:
        assert driver.nul_matters  # only PostgreSQL's JSONB refuses it
    else:
        assert not driver.nul_matters

    report = await run_repair(store)

    assert report.actions["nul_replaced"] == int(driver.nul_matters)
    if driver.nul_matters:  # the pending write, rewritten, is applied on the resume
        resumed = await store.invoke(graph, None, config("nul"))
        assert resumed["text"] == "page one\ufffdpage two"
    else:  # stored as it is: the run finished, and the text is the node's
        state = await store.get_state(graph, config("nul"))
        assert state.values["text"] == NUL_TEXT and state.next == ()


async def test_what_a_driver_cannot_do_it_reports(case: tuple[Driver, Store]) -> None:
    driver, store = case
    await seed(store, bricked=1)
    if driver.stored_bytes:
        if store.is_async:
            inventory = await ainventory_types(store.saver)
        else:
            inventory = inventory_types(store.saver)
        assert inventory.threads_scanned > 0
        return
    with pytest.raises(NoStoredBytes, match="shows no stored bytes"):
        if store.is_async:
            await ainventory_types(store.saver)
        else:
            inventory_types(store.saver)
