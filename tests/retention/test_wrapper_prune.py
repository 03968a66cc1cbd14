"""`PatchingCheckpointer.prune` and `aprune`, LangGraph's signature, where the inner saver
class has them: over PostgreSQL they prune delta threads safely (LangGraph's own refuses
them), as the Agent Server's TTL sweep calls them; `strategy="delete"` deletes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.retention.test_prune_delta_threads import talked
from tests.support.pruning import count_rows, pruned_store, seen, thread


@pytest.mark.parametrize("kind", ["postgres", "apostgres"])
async def test_the_wrappers_prune_keeps_a_delta_thread_reading_the_same(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with pruned_store(kind, tmp_path, request) as store:
        graph = await talked(store, "deep", 7)
        before = await seen(store, graph, thread("deep"))
        rows = count_rows(store.reader, "deep")["checkpoints"]
        wrapper = PatchingCheckpointer(store.saver)

        if store.is_async:
            await wrapper.aprune(["deep"])
        else:
            wrapper.prune(["deep"])

        assert 1 < count_rows(store.reader, "deep")["checkpoints"] < rows
        assert await seen(store, graph, thread("deep")) == before
        await store.invoke(graph, {"messages": [HumanMessage("more")]}, thread("deep"))
        messages = (await store.get_state(graph, thread("deep"))).values["messages"]
        assert len(messages) == 16


@pytest.mark.parametrize("kind", ["postgres", "apostgres"])
async def test_strategy_delete_removes_the_threads(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with pruned_store(kind, tmp_path, request) as store:
        await talked(store, "gone", 2)
        await talked(store, "kept", 2)
        wrapper = PatchingCheckpointer(store.saver)

        if store.is_async:
            await wrapper.aprune(["gone"], strategy="delete")
        else:
            wrapper.prune(["gone"], strategy="delete")

        assert count_rows(store.reader, "gone") == dict.fromkeys(
            count_rows(store.reader, "gone"), 0
        )
        assert count_rows(store.reader, "kept")["checkpoints"] > 1


async def test_the_wrapper_checks_its_arguments_as_langgraph_does(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with pruned_store("postgres", tmp_path, request) as store:
        wrapper = PatchingCheckpointer(store.saver)
        with pytest.raises(TypeError, match="not a str"):
            wrapper.prune("one-thread")
        with pytest.raises(ValueError, match="Unknown prune strategy"):
            wrapper.prune(["t"], strategy="keep_some")


def test_a_saver_without_prune_gets_the_twin_it_talks_in_where_a_pruner_deletes_its_rows(
    tmp_path: Path,
) -> None:
    """SQLite's savers have no prune of their own: the sync one gets `prune`, the async
    one `aprune`. A saver reached only through its API gets none."""
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as sqlite:
        wrapped = vars(type(PatchingCheckpointer(sqlite)))
        assert "prune" in wrapped and "aprune" not in wrapped
    wrapped = vars(type(PatchingCheckpointer(InMemorySaver())))
    assert "prune" not in wrapped and "aprune" not in wrapped
