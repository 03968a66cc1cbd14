"""Everything but loads is the inner saver's: versions, serde, setup, context
managers, extended capabilities (exactly where the inner class has them)."""

from __future__ import annotations

import copy
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_checkpoint_repair import PatchingCheckpointer
from langgraph_checkpoint_repair.checkpointer.saver import ALWAYS_DELEGATED as BASE_DELEGATED
from langgraph_checkpoint_repair.checkpointer.saver import overrides
from tests.checkpointer.test_checkpointer_state import BROKEN_HISTORIES, dump, store_history
from tests.support.agents import chat_graph, thread
from tests.support.needs import needs_delta
from tests.support.oracle import violations
from tests.support.stores import Store

ALWAYS_DELEGATED = {"get_next_version", *BASE_DELEGATED}
SAVER_CLASSES = [InMemorySaver, SqliteSaver, AsyncSqliteSaver, PostgresSaver, AsyncPostgresSaver]


class CopyingSaver(InMemorySaver):
    """An in-memory saver that also supports copy_thread, as some real savers do."""

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        for ns, checkpoints in list(self.storage[source_thread_id].items()):
            self.storage[target_thread_id][ns] = dict(checkpoints)
        for (thread_id, ns, channel, version), blob in list(self.blobs.items()):
            if thread_id == source_thread_id:
                self.blobs[(target_thread_id, ns, channel, version)] = blob

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)


def public_methods() -> list[str]:
    names = [n for n, v in inspect.getmembers(BaseCheckpointSaver) if callable(v)]
    extra = ["__enter__", "__exit__", "__aenter__", "__aexit__"]
    return [n for n in names if not n.startswith("_")] + extra


OWN_METHODS = {
    SqliteSaver: {"prune", "copy_thread", "delete_for_runs"},
    AsyncSqliteSaver: {"aprune", "acopy_thread", "adelete_for_runs"},
    PostgresSaver: {"copy_thread", "delete_for_runs"},
    AsyncPostgresSaver: {"acopy_thread", "adelete_for_runs"},
}
"""What the wrapper adds over a saver class without it, in the twin the saver talks in:
a prune that keeps what each thread needs, a copy inside the store, a rollback of a
run that leaves each thread as it was before it."""


@pytest.mark.parametrize("inner", [*SAVER_CLASSES, CopyingSaver], ids=lambda c: c.__name__)
def test_wrapper_class_shows_exactly_the_inner_class_capabilities(inner: type) -> None:
    """Exactly the inner class's, and a prune and a copy where the package writes the
    store's rows."""
    wrapper_class = type(PatchingCheckpointer.__new__(PatchingCheckpointer, object.__new__(inner)))
    for name in public_methods():
        if name in ALWAYS_DELEGATED:
            continue
        added = name in OWN_METHODS.get(inner, set())
        assert overrides(wrapper_class, name) == (overrides(inner, name) or added), name


@pytest.mark.parametrize("name", sorted(BASE_DELEGATED))
def test_base_methods_are_delegated_where_langgraph_has_them(name: str) -> None:
    wrapper_class = type(PatchingCheckpointer(InMemorySaver()))
    assert (name in wrapper_class.__dict__) == hasattr(BaseCheckpointSaver, name)


def test_extended_capabilities_delegate_to_the_inner_saver() -> None:
    inner = CopyingSaver()
    wrapper = PatchingCheckpointer(inner)
    assert "copy_thread" in type(wrapper).__dict__
    assert "delete_for_runs" not in type(wrapper).__dict__
    graph = chat_graph(wrapper)
    graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "a"}})
    wrapper.copy_thread("a", "b")
    copied = wrapper.get_tuple({"configurable": {"thread_id": "b"}})
    assert copied is not None
    assert [m.content for m in copied.checkpoint["channel_values"]["messages"]] == ["hi", "hi"]
    wrapper.delete_thread("a")
    assert inner.get_tuple({"configurable": {"thread_id": "a"}}) is None


async def test_version_scheme_serde_and_specs_are_the_inner_savers(store: Store) -> None:
    serde = store.saver.serde
    wrapper = PatchingCheckpointer(store.saver)
    assert type(wrapper.saver) is type(store.saver)  # its own copy: the saver is left as it was
    assert store.saver.serde is serde
    proxy: Any = wrapper.serde
    assert proxy.inner is store.saver.serde  # loads noted as they go, writes the saver's
    assert wrapper.config_specs == store.saver.config_specs
    first = store.saver.get_next_version(None, None)
    assert type(wrapper.get_next_version(None, None)) is type(first)
    if isinstance(first, int):
        assert wrapper.get_next_version(first, None) == store.saver.get_next_version(first, None)
    else:
        assert (
            wrapper.get_next_version(first, None).split(".")[0]
            == (store.saver.get_next_version(first, None).split(".")[0])
        )


async def test_writes_pass_through_untouched(store: Store) -> None:
    wrapper = PatchingCheckpointer(store.saver)
    config = thread()
    history = BROKEN_HISTORIES["dangling"]
    await store.update_state(chat_graph(wrapper), config, {"messages": history}, "chat")
    raw = await store.get_tuple(store.saver, config)
    assert raw is not None
    assert dump(raw.checkpoint["channel_values"]["messages"]) == dump(history)


@needs_delta
async def test_delta_channel_history_is_the_stored_one(store: Store) -> None:
    config = await store_history(store, BROKEN_HISTORIES["dangling"])
    graph = chat_graph(store.saver)
    head = await store.update_state(graph, config, {"messages": [HumanMessage("x")]}, "chat")
    wrapper = PatchingCheckpointer(store.saver)
    if store.is_async:
        raw = await store.saver.aget_delta_channel_history(config=head, channels=["messages"])
        via = await wrapper.aget_delta_channel_history(config=head, channels=["messages"])
    else:
        raw = store.saver.get_delta_channel_history(config=head, channels=["messages"])
        via = wrapper.get_delta_channel_history(config=head, channels=["messages"])
    assert dump(via["messages"]["seed"]) == dump(raw["messages"]["seed"])
    assert violations(via["messages"]["seed"])


async def test_clean_checkpoints_come_back_as_the_same_tuple(store: Store) -> None:
    config = thread()
    await store.invoke(chat_graph(store.saver), {"messages": [HumanMessage("hi")]}, config)
    raw = await store.get_tuple(store.saver, config)
    assert PatchingCheckpointer(store.saver).repair_tuple(raw) is raw


async def test_the_inner_savers_tuple_is_never_mutated(store: Store) -> None:
    config = await store_history(store, BROKEN_HISTORIES["misplaced"])
    raw = await store.get_tuple(store.saver, config)
    assert raw is not None
    snapshot = copy.deepcopy(raw)
    repaired = PatchingCheckpointer(store.saver).repair_tuple(raw)
    assert repaired is not raw
    assert dump(raw.checkpoint["channel_values"]["messages"]) == dump(
        snapshot.checkpoint["channel_values"]["messages"]
    )
    assert raw.checkpoint.keys() == snapshot.checkpoint.keys()


def test_context_manager_use_returns_the_wrapper() -> None:
    with PatchingCheckpointer(InMemorySaver()) as saver:
        assert isinstance(saver, PatchingCheckpointer)


async def test_async_context_manager_use_returns_the_wrapper() -> None:
    async with PatchingCheckpointer(InMemorySaver()) as saver:
        assert isinstance(saver, PatchingCheckpointer)


def test_setup_and_other_attributes_reach_the_inner_saver(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as inner:
        wrapper = PatchingCheckpointer(inner)
        wrapper.setup()
        assert wrapper.conn is inner.conn
        graph = chat_graph(wrapper)
        graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "s"}})
        assert inner.get_tuple({"configurable": {"thread_id": "s"}}) is not None


def test_missing_attributes_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = PatchingCheckpointer(InMemorySaver()).no_such_thing


def test_rejects_what_is_not_a_saver() -> None:
    with pytest.raises(TypeError, match="BaseCheckpointSaver"):
        PatchingCheckpointer(object())  # type: ignore[arg-type]


needs_allowlist = pytest.mark.skipif(
    not hasattr(BaseCheckpointSaver, "with_allowlist"),
    reason="with_allowlist needs langgraph-checkpoint 4",
)


@needs_allowlist
def test_with_allowlist_wraps_the_inner_savers_own() -> None:
    seen: list[Any] = []

    class RecordingSaver(InMemorySaver):
        def with_allowlist(self, extra_allowlist: Any) -> InMemorySaver:
            seen.append(extra_allowlist)
            return copy.copy(self)

    inner = RecordingSaver()
    wrapper = PatchingCheckpointer(inner, channels=["messages"])
    derived = wrapper.with_allowlist([("tests", "Point")])
    assert seen == [[("tests", "Point")]]
    assert isinstance(derived, PatchingCheckpointer)
    assert isinstance(derived.saver, RecordingSaver) and derived.saver is not inner
    assert derived.channels == ["messages"]


@needs_allowlist
def test_with_allowlist_returns_the_wrapper_when_the_inner_saver_is_unchanged() -> None:
    wrapper = PatchingCheckpointer(InMemorySaver())
    assert wrapper.with_allowlist([("tests", "Point")]) is wrapper


STRICT_SCRIPT = textwrap.dedent(
    """
    import sys
    from dataclasses import dataclass
    from typing import Annotated, TypedDict
    import operator
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from langgraph_checkpoint_repair import PatchingCheckpointer

    @dataclass
    class Point:
        x: int

    class State(TypedDict):
        points: Annotated[list[Point], operator.add]

    builder = StateGraph(State)
    builder.add_node("add", lambda s: {"points": [Point(len(s["points"]))]})
    builder.add_edge(START, "add")
    saver = InMemorySaver()
    if sys.argv[1] == "wrapped":
        saver = PatchingCheckpointer(saver)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "1"}}
    graph.invoke({"points": []}, config)
    graph.invoke({"points": []}, config)
    print(type(graph.get_state(config).values["points"][0]).__name__)
    """
)


def test_strict_msgpack_loads_schema_types_through_the_wrapper(tmp_path: Path) -> None:
    script = tmp_path / "strict.py"
    script.write_text(STRICT_SCRIPT)
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"}
    outputs = [
        subprocess.run(
            [sys.executable, str(script), mode], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        for mode in ("raw", "wrapped")
    ]
    assert outputs == ["Point", "Point"]
