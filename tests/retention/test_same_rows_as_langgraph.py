"""On threads LangGraph's own `PostgresSaver.prune(strategy="keep_latest")` accepts, `prune`
leaves exactly the rows it leaves: two copies of one store, one pruned by each."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command

from langgraph_checkpoint_repair.batch.pruning import prune_threads
from tests.support import asking_graphs
from tests.support.pruning import NOW, TABLES, insert_rows, plain_chat, stored_rows, thread
from tests.support.stores import Store


def copy_rows(source: PostgresSaver, target: PostgresSaver) -> None:
    """Every row of LangGraph's tables, as stored, into another store's (empty) tables."""
    for table, rows in stored_rows(source).items():
        insert_rows(target, table, rows)


async def seed(saver: PostgresSaver) -> list[str]:
    store = Store(saver, is_async=False)
    chat = plain_chat(saver)
    for turn in range(3):
        await store.invoke(chat, {"messages": [HumanMessage(f"turn {turn}")]}, thread("chat"))
    asking = asking_graphs.build("subgraph", saver)
    await store.invoke(asking, {"out": ""}, thread("paused-inside"))
    await store.invoke(asking, {"out": ""}, thread("answered"))
    await store.invoke(asking, Command(resume="a"), thread("answered"))
    await store.invoke(asking, Command(resume="b"), thread("answered"))
    await asking_graphs.answer_first(
        store, asking_graphs.build("one_task", saver), "one_task", thread("waiting")
    )
    return ["answered", "chat", "paused-inside", "waiting"]


@pytest.mark.skipif(
    "prune" not in vars(PostgresSaver), reason="this langgraph-checkpoint-postgres has no prune"
)
async def test_a_default_prune_leaves_the_rows_langgraphs_prune_leaves(
    pg_uri: str, other_pg_uri: str
) -> None:
    with (
        PostgresSaver.from_conn_string(pg_uri) as ours,
        PostgresSaver.from_conn_string(other_pg_uri) as theirs,
    ):
        ours.setup()
        theirs.setup()
        threads = await seed(ours)
        copy_rows(ours, theirs)
        assert stored_rows(ours) == stored_rows(theirs)
        namespaces = {row[1] for row in stored_rows(ours)["checkpoints"]}
        assert len(namespaces) > 2  # subgraph calls: one paused, one finished

        theirs.prune(threads, strategy="keep_latest")
        report = prune_threads(ours, min_idle=NOW)

        assert report.threads_pruned == len(threads)
        assert stored_rows(ours) == stored_rows(theirs)
        assert set(TABLES["postgres"]) == set(stored_rows(ours))
