"""Threads whose bytes are wrong, loaded through the wrapper on real savers and graphs:
a class whose module was renamed (lost, moved, or raised), a stored value that no longer
decodes, and U+0000 in a pending write that PostgreSQL cannot store."""

from __future__ import annotations

import importlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy, UnreadableCheckpoint
from langgraph_checkpoint_repair.compatibility import features
from langgraph_checkpoint_repair.decoding.load_watcher import LoadWatcher
from langgraph_checkpoint_repair.decoding.nul import REPLACEMENT
from tests.support.seeding import config
from tests.support.shop import ORDER, Shop, order_graph, shop_on_path
from tests.support.stores import Store, open_store


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shop]:
    with shop_on_path(tmp_path, monkeypatch) as made:
        yield made


@pytest.fixture(params=["sqlite", "postgres", "aiosqlite", "apostgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with open_store(request.param, tmp_path, request) as opened:
        yield opened


async def placed(store: Store, shop: Shop, thread: str) -> None:
    """A thread whose state holds an `Order` of the old module, which is then removed."""
    graph = order_graph(store.saver, shop.old.Order(**ORDER))
    await store.invoke(graph, {}, config(thread))
    shop.forget_old()


def lost_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "langgraph_checkpoint_repair" and r.levelno == logging.WARNING
    ]


async def test_a_lost_type_loads_as_langgraph_loads_it_and_is_logged_on_every_load(
    store: Store, shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    """The application gets what LangGraph hands back for a type it cannot build: the
    stored fields (langgraph-checkpoint 4) or None (older releases)."""
    await placed(store, shop, "lost")
    raw = await store.get_state(order_graph(store.saver, None), config("lost"))
    assert raw.values.get("order") in (ORDER, None)
    wrapped = PatchingCheckpointer(store.saver)
    app = order_graph(wrapped, None)
    caplog.set_level(logging.WARNING, "langgraph_checkpoint_repair")
    state = await store.get_state(app, config("lost"))
    assert state.values.get("order") == raw.values.get("order")
    first = lost_lines(caplog)
    assert len(first) == 1
    assert shop.old_type in first[0] and "'lost'" in first[0]
    assert state.config["configurable"]["checkpoint_id"] in first[0]
    await store.get_tuple(wrapped, config("lost"))
    await store.get_tuple(wrapped, config("lost"))
    assert len(lost_lines(caplog)) == 3


async def test_a_moved_type_loads_as_the_new_class(
    store: Store, shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    await placed(store, shop, "moved")
    wrapped = PatchingCheckpointer(store.saver, moved_types={shop.old_type: shop.new_type})
    caplog.set_level(logging.WARNING, "langgraph_checkpoint_repair")
    state = await store.get_state(order_graph(wrapped, None), config("moved"))
    new = importlib.import_module(shop.new_name)
    assert isinstance(state.values["order"], new.Order)
    assert state.values["order"] == new.Order(**ORDER)
    assert lost_lines(caplog) == []


async def test_the_saver_wrapped_is_left_as_it_was(store: Store, shop: Shop) -> None:
    """The wrapper loads through a copy of its own: the raw saver's loads do not change,
    and two wrappers with different mappings each see only their own."""
    await placed(store, shop, "moved")
    serde = store.saver.serde
    raw_before = await store.get_state(order_graph(store.saver, None), config("moved"))
    wrapped = PatchingCheckpointer(store.saver, moved_types={shop.old_type: shop.new_type})
    elsewhere = PatchingCheckpointer(store.saver, moved_types={"gone.module:Old": "x.y:New"})
    assert store.saver.serde is serde and not isinstance(serde, LoadWatcher)
    assert wrapped.saver is not store.saver and type(wrapped.saver) is type(store.saver)
    raw_after = await store.get_state(order_graph(store.saver, None), config("moved"))
    assert raw_after.values.get("order") == raw_before.values.get("order")
    new = importlib.import_module(shop.new_name)
    assert not isinstance(raw_after.values.get("order"), new.Order)
    moved = await store.get_state(order_graph(wrapped, None), config("moved"))
    assert isinstance(moved.values["order"], new.Order)
    other = await store.get_state(order_graph(elsewhere, None), config("moved"))
    assert not isinstance(other.values.get("order"), new.Order)
    proxy: Any = elsewhere.saver.serde
    assert proxy.moved == {("gone.module", "Old"): ("x.y", "New")}


async def test_a_moved_type_stays_moved_through_a_listing(store: Store, shop: Shop) -> None:
    await placed(store, shop, "listed")
    wrapped = PatchingCheckpointer(store.saver, moved_types={shop.old_type: shop.new_type})
    new = importlib.import_module(shop.new_name)
    heads = await store.list(wrapped, config("listed"))
    assert isinstance(heads[0].checkpoint["channel_values"]["order"], new.Order)


async def test_a_lost_type_raises_when_the_policy_says_so(store: Store, shop: Shop) -> None:
    await placed(store, shop, "strict")
    wrapped = PatchingCheckpointer(store.saver, policy=RepairPolicy(lost_types="raise"))
    with pytest.raises(UnreadableCheckpoint) as raised:
        await store.get_state(order_graph(wrapped, None), config("strict"))
    error = raised.value
    assert error.thread_id == "strict" and error.checkpoint_ns == ""
    assert error.checkpoint_id is not None and error.checkpoint_id in str(error)
    assert error.where == "channel 'order'"
    assert shop.old_type in error.error and "not found" in error.error
    assert "langgraph-repair show TARGET --thread strict" in str(error)


def test_the_lost_types_policy_takes_log_or_raise_only() -> None:
    with pytest.raises(ValueError, match="lost_types"):
        RepairPolicy(lost_types="ignore")  # type: ignore[arg-type]


# A stored value that does not decode.


def sqlite_truncate_checkpoint(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 20)")


def postgres_truncate_blob(uri: str, channel: str) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(
            "UPDATE checkpoint_blobs SET blob = substring(blob from 1 for 20) WHERE channel = %s",
            (channel,),
        )


async def test_a_truncated_checkpoint_on_sqlite_is_unreadable(tmp_path: Path, shop: Shop) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        order_graph(saver, shop.old.Order(**ORDER)).invoke({}, config("cut"))
        head = saver.get_tuple(config("cut"))
        assert head is not None
        sqlite_truncate_checkpoint(path)
        wrapped = PatchingCheckpointer(saver)
        with pytest.raises(UnreadableCheckpoint) as raised:
            order_graph(wrapped, None).get_state(config("cut"))
        with pytest.raises(UnreadableCheckpoint) as listed:
            list(wrapped.list(config("cut")))
    for error in (raised.value, listed.value):
        assert error.thread_id == "cut"
        assert error.checkpoint_id == head.config["configurable"]["checkpoint_id"]
        assert error.where == "the checkpoint"
        assert error.error and "\n" not in error.error
        assert "langgraph-repair show TARGET --thread cut" in str(error)


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_truncated_blob_on_postgres_is_unreadable(
    pg_uri: str, shop: Shop, is_async: bool
) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        order_graph(saver, [shop.old.Order(**ORDER)]).invoke({}, config("cut"))
        head = saver.get_tuple(config("cut"))
    assert head is not None
    postgres_truncate_blob(pg_uri, "order")
    if is_async:
        async with AsyncPostgresSaver.from_conn_string(pg_uri) as asaver:
            with pytest.raises(UnreadableCheckpoint) as raised:
                await order_graph(PatchingCheckpointer(asaver), None).aget_state(config("cut"))
    else:
        with (
            PostgresSaver.from_conn_string(pg_uri) as saver,
            pytest.raises(UnreadableCheckpoint) as raised,
        ):
            order_graph(PatchingCheckpointer(saver), None).get_state(config("cut"))
    error = raised.value
    assert (error.thread_id, error.checkpoint_ns) == ("cut", "")
    assert error.checkpoint_id == head.config["configurable"]["checkpoint_id"]
    assert error.where == "channel 'order'"
    assert isinstance(error, ValueError)


def test_an_error_that_is_not_a_decode_error_passes_through(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    saver = SqliteSaver(connection)
    order_graph(saver, "kept").invoke({}, config("closed"))
    connection.close()
    with pytest.raises(sqlite3.ProgrammingError):
        PatchingCheckpointer(saver).get_tuple(config("closed"))


def test_a_lost_connection_to_postgres_passes_through(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        order_graph(saver, "kept").invoke({}, config("gone"))
        wrapped = PatchingCheckpointer(saver)
        saver.conn.close()
        with pytest.raises(psycopg.OperationalError):
            wrapped.get_tuple(config("gone"))


# U+0000 in a pending write.


class TextState(TypedDict, total=False):
    text: str


@dataclass
class Calls:
    count: int = 0


def text_graph(saver: BaseCheckpointSaver[Any], calls: Calls) -> CompiledStateGraph[Any]:
    def write(state: TextState) -> TextState:
        calls.count += 1
        return {"text": "before\x00after"}

    builder = StateGraph(TextState)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    return builder.compile(checkpointer=saver)


def nul_writes(uri: str) -> int:
    """Stored pending writes whose bytes hold the node's text, U+0000 included."""
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoint_writes WHERE position(%s in blob) > 0",
            (b"before\x00after",),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_nul_write_bricks_postgres_and_the_wrapper_resumes_it(pg_uri: str) -> None:
    calls = Calls()
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        with pytest.raises(psycopg.errors.UntranslatableCharacter):
            text_graph(saver, calls).invoke({"text": ""}, config("nul"))
        assert nul_writes(pg_uri) == 1
        for _ in range(2):
            with pytest.raises(psycopg.errors.UntranslatableCharacter):
                text_graph(saver, calls).invoke(None, config("nul"))
        assert calls.count == 1

        out = text_graph(PatchingCheckpointer(saver), calls).invoke(None, config("nul"))
        assert calls.count == 1
        assert out["text"] == f"before{REPLACEMENT}after"
        stored = saver.get_tuple(config("nul"))
    assert stored is not None
    assert stored.checkpoint["channel_values"]["text"] == f"before{REPLACEMENT}after"


async def test_a_nul_write_bricks_async_postgres_and_the_wrapper_resumes_it(
    pg_uri: str,
) -> None:
    calls = Calls()
    async with AsyncPostgresSaver.from_conn_string(pg_uri) as saver:
        await saver.setup()
        with pytest.raises(psycopg.errors.UntranslatableCharacter):
            await text_graph(saver, calls).ainvoke({"text": ""}, config("nul"))
        with pytest.raises(psycopg.errors.UntranslatableCharacter):
            await text_graph(saver, calls).ainvoke(None, config("nul"))
        out = await text_graph(PatchingCheckpointer(saver), calls).ainvoke(None, config("nul"))
        stored = await saver.aget_tuple(config("nul"))
    assert calls.count == 1
    assert out["text"] == f"before{REPLACEMENT}after"
    assert stored is not None
    assert stored.checkpoint["channel_values"]["text"] == f"before{REPLACEMENT}after"


@pytest.mark.parametrize("wrap", [False, True])
def test_sqlite_keeps_nul_as_it_is(tmp_path: Path, wrap: bool) -> None:
    calls = Calls()
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        used: BaseCheckpointSaver[Any] = PatchingCheckpointer(saver) if wrap else saver
        out = text_graph(used, calls).invoke({"text": ""}, config("nul"))
        state = text_graph(used, calls).get_state(config("nul"))
    assert out["text"] == state.values["text"] == "before\x00after"


# Strict msgpack mode: LangGraph widens the allowlist through `with_allowlist`.


@pytest.mark.skipif(not features.HAS_MSGPACK_ALLOWLIST, reason="needs langgraph-checkpoint 4")
def test_moved_types_survive_the_allowlist_of_strict_msgpack(shop: Shop) -> None:
    saver = InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))
    order_graph(saver, shop.old.Order(**ORDER)).invoke({}, config("strict"))
    shop.forget_old()
    wrapped = PatchingCheckpointer(saver, moved_types={shop.old_type: shop.new_type})
    widened = wrapped.with_allowlist([(shop.new_name, "Order")])
    assert isinstance(widened, PatchingCheckpointer) and widened.saver is not saver
    assert isinstance(widened.saver.serde, LoadWatcher)
    new = importlib.import_module(shop.new_name)
    loaded = widened.get_tuple(config("strict"))
    assert loaded is not None
    assert loaded.checkpoint["channel_values"]["order"] == new.Order(**ORDER)
    refused = wrapped.get_tuple(config("strict"))  # the allowlist as it was: plain data
    assert refused is not None and refused.checkpoint["channel_values"]["order"] == ORDER
