"""The Agent Server entry point, entered as the server enters it, on every LangGraph we
support: no server process (the Agent Server itself needs a newer LangGraph than our
oldest), but the same `checkpointer()` call, on a real SQLite file and real PostgreSQL."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair import PatchingCheckpointer, UnreadableCheckpoint, server
from tests.support.agents import ToolBox, react_agent
from tests.support.asking_graphs import (
    SECOND,
    answer_first,
    build,
    needs_async_interrupt,
    thread,
)
from tests.support.context import WINDOW, markers, overflow, tokens
from tests.support.fakes import model
from tests.support.oracle import assert_valid, violations
from tests.support.seeding import brick, config
from tests.support.shop import ORDER, Shop, order_graph, shop_on_path
from tests.support.stores import Store


@pytest.fixture(params=["sqlite", "postgres"])
async def bricked_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store holding one thread bricked the usual way, named as the server's
    environment names it."""
    if request.param == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        uri: str = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(uri) as pg:
            pg.setup()
            await brick(Store(pg, is_async=False), "bricked")
        return uri
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        await brick(Store(saver, is_async=False), "bricked")
    return f"sqlite:///{path}"


async def test_the_entry_point_serves_a_bricked_thread_repaired(
    bricked_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGGRAPH_REPAIR_TARGET", bricked_target)
    monkeypatch.setenv("LANGGRAPH_REPAIR_POOL_SIZE", "2")
    async with server.checkpointer() as saver:
        assert isinstance(saver, PatchingCheckpointer)
        loaded = await saver.aget_tuple(config("bricked"))
        assert loaded is not None
        raw = await saver.saver.aget_tuple(config("bricked"))
        assert raw is not None and violations(raw.checkpoint["channel_values"]["messages"])
        assert_valid(loaded.checkpoint["channel_values"]["messages"])

        replies = model("Here is a joke.")
        agent = react_agent(replies, ToolBox(), saver)
        out = await agent.ainvoke(
            {"messages": [HumanMessage("Tell me a joke.")]}, config("bricked")
        )
        assert out["messages"][-1].content == "Here is a joke."
        assert_valid(replies.received[-1])


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_environment_brings_a_token_budget(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if kind == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        target: str = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(target) as pg:
            pg.setup()
            await overflow(Store(pg, is_async=False), "long")
    else:
        with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            await overflow(Store(saver, is_async=False), "long")
        target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    monkeypatch.setenv("LANGGRAPH_REPAIR_TARGET", target)
    monkeypatch.setenv("LANGGRAPH_REPAIR_POLICY", f"max_input_tokens={WINDOW}, context_reserve=300")
    async with server.checkpointer() as saver:
        assert isinstance(saver, PatchingCheckpointer)
        assert saver.policy.input_budget == WINDOW - 300
        raw = await saver.saver.aget_tuple(config("long"))
        loaded = await saver.aget_tuple(config("long"))
        assert raw is not None and loaded is not None
        assert tokens(raw.checkpoint["channel_values"]["messages"]) > WINDOW
        fitted = loaded.checkpoint["channel_values"]["messages"]
        assert tokens(fitted) <= WINDOW - 300 and len(markers(fitted)) == 1


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shop]:
    with shop_on_path(tmp_path, monkeypatch) as made:
        yield made


@pytest.fixture(params=["sqlite", "postgres"])
def moved_target(request: pytest.FixtureRequest, tmp_path: Path, shop: Shop) -> str:
    """A store holding one thread whose state names a class of a module now removed."""
    if request.param == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        uri: str = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(uri) as pg:
            pg.setup()
            order_graph(pg, shop.old.Order(**ORDER)).invoke({}, config("moved"))
        target = uri
    else:
        path = tmp_path / "threads.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            order_graph(saver, shop.old.Order(**ORDER)).invoke({}, config("moved"))
        target = f"sqlite:///{path}"
    shop.forget_old()
    return target


async def test_the_environment_brings_moved_types(
    moved_target: str, shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGGRAPH_REPAIR_TARGET", moved_target)
    monkeypatch.setenv(
        "LANGGRAPH_REPAIR_MOVED_TYPES",
        f"other.place:Gone=else.where:Gone, {shop.old_type}={shop.new_type}",
    )
    async with server.checkpointer() as saver:
        loaded = await saver.aget_tuple(config("moved"))
    assert loaded is not None
    new = importlib.import_module(shop.new_name)
    assert loaded.checkpoint["channel_values"]["order"] == new.Order(**ORDER)


async def test_the_environment_brings_lost_types_raise(
    moved_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGGRAPH_REPAIR_TARGET", moved_target)
    monkeypatch.setenv("LANGGRAPH_REPAIR_POLICY", "lost_types=raise")
    async with server.checkpointer() as saver:
        with pytest.raises(UnreadableCheckpoint) as raised:
            await saver.aget_tuple(config("moved"))
    assert raised.value.thread_id == "moved" and raised.value.where == "channel 'order'"


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("LANGGRAPH_REPAIR_MOVED_TYPES", "shop.models:Order", "LANGGRAPH_REPAIR_MOVED_TYPES"),
        ("LANGGRAPH_REPAIR_MOVED_TYPES", "a:B=c.D", "LANGGRAPH_REPAIR_MOVED_TYPES"),
        ("LANGGRAPH_REPAIR_POLICY", "lost_types=ignore", "lost_types"),
    ],
)
async def test_a_bad_integrity_setting_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    monkeypatch.setenv("LANGGRAPH_REPAIR_TARGET", f"sqlite:///{tmp_path / 'threads.sqlite'}")
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError) as raised:
        async with server.checkpointer():
            pass
    message = str(raised.value)
    assert named in message and value.split("=")[-1] in message and "\n" not in message


@needs_async_interrupt
@pytest.mark.parametrize("setting", ["", "stale_resume=keep"])
async def test_the_environment_says_whether_a_stale_answer_is_left_out(
    setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as sqlite:
        store = Store(sqlite, is_async=False)
        await answer_first(store, build("one_task", sqlite), "one_task", thread("waiting"))
    monkeypatch.setenv("LANGGRAPH_REPAIR_TARGET", f"sqlite:///{path}")
    monkeypatch.setenv("LANGGRAPH_REPAIR_POLICY", setting)
    async with server.checkpointer() as saver:
        result = await build("one_task", saver).ainvoke(None, thread("waiting"))
    if setting:
        assert result["out"] == "got:'yes'+'yes'"  # kept: as LangGraph stored it
    else:
        assert [found.value for found in result["__interrupt__"]] == [SECOND]
