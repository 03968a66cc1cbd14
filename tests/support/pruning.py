"""What the prune tests read: every row of LangGraph's tables as stored, a thread's state as
an application sees it, and the small graphs whose threads they prune."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from psycopg.types.json import Jsonb
from typing_extensions import TypedDict

from langgraph_checkpoint_repair.batch.pruning import (
    PruneReport,
    PruneUndoReport,
    aprune_threads,
    aundo_prune,
    prune_threads,
    undo_prune,
)
from tests.support.stores import Store, open_store

PRUNE_KINDS = ["sqlite", "postgres", "aiosqlite", "apostgres"]
"""The savers whose tables a prune deletes rows of, sync and async."""
NOW = timedelta(0)
"""--min-idle 0: threads the test just wrote are pruned too."""

TABLES = {
    "postgres": {
        "checkpoints": "thread_id, checkpoint_ns, checkpoint_id",
        "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version",
        "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    },
    "sqlite": {
        "checkpoints": "thread_id, checkpoint_ns, checkpoint_id",
        "writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    },
}


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def plain_chat(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    """One node over a plain `messages` channel (add_messages): each turn adds a reply."""
    builder = StateGraph(Chat)
    builder.add_node(
        "chat", lambda state: {"messages": [AIMessage(f"reply {len(state['messages'])}")]}
    )
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def kind_of(saver: BaseCheckpointSaver[Any]) -> str:
    return "postgres" if isinstance(saver, PostgresSaver) else "sqlite"


def stored_rows(saver: BaseCheckpointSaver[Any]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of LangGraph's tables, column by column as stored, in key order."""
    tables = TABLES[kind_of(saver)]
    with _connection(saver) as execute:
        return {
            table: [tuple(row) for row in execute(f"SELECT * FROM {table} ORDER BY {key}")]
            for table, key in tables.items()
        }


def count_rows(saver: BaseCheckpointSaver[Any], thread_id: str) -> dict[str, int]:
    return {
        table: sum(1 for row in rows if row[0] == thread_id)
        for table, rows in stored_rows(saver).items()
    }


def execute(saver: BaseCheckpointSaver[Any], query: str, params: Any = ()) -> list[Any]:
    """A statement of the test's own on the saver's database (`?` placeholders become
    `%s` on PostgreSQL)."""
    with _connection(saver) as run:
        found: list[Any] = run(query, params)
        return found


@contextlib.contextmanager
def _connection(saver: BaseCheckpointSaver[Any]) -> Iterator[Any]:
    if isinstance(saver, SqliteSaver):
        conn: sqlite3.Connection = saver.conn

        def run_sqlite(query: str, params: Any = ()) -> list[Any]:
            with saver.lock:
                found = conn.execute(query, params).fetchall()
                conn.commit()
                return found

        yield run_sqlite
        return
    assert isinstance(saver, PostgresSaver)

    def run_postgres(query: str, params: Any = ()) -> list[Any]:
        with saver.lock, saver.conn.cursor() as cursor:  # type: ignore[union-attr]
            cursor.execute(query.replace("?", "%s"), params)
            found = cursor.fetchall() if cursor.description else []
            return [tuple(row.values()) if isinstance(row, dict) else row for row in found]

    yield run_postgres


def insert_rows(saver: BaseCheckpointSaver[Any], table: str, rows: list[tuple[Any, ...]]) -> None:
    """Rows as `stored_rows` read them, inserted as they were."""
    if not rows:
        return
    marks = ", ".join(["?"] * len(rows[0]))
    stored = [tuple(Jsonb(v) if isinstance(v, dict) else v for v in row) for row in rows]
    with _connection(saver) as run:
        for row in stored:
            run(f"INSERT INTO {table} VALUES ({marks})", row)


def clone_thread(saver: BaseCheckpointSaver[Any], source: str, copies: int) -> list[str]:
    """`copies` threads holding the rows of `source`, as stored (their thread ids after it)."""
    clones = [f"{source}-{n:04d}" for n in range(copies)]
    for table, rows in stored_rows(saver).items():
        mine = [row for row in rows if row[0] == source]
        insert_rows(saver, table, [(clone, *row[1:]) for clone in clones for row in mine])
    return clones


async def seen(store: Store, graph: CompiledStateGraph[Any], config: Any) -> Any:
    """A thread's state as the application sees it: values, next nodes, interrupts, and
    each task's interrupts and subgraph state."""
    snapshot = await store.get_state(graph, config, subgraphs=True)
    return _shown(snapshot)


def _shown(snapshot: Any) -> Any:
    tasks = [
        (
            task.name,
            [(i.id, i.value) for i in task.interrupts],
            _shown(task.state)
            if task.state and not isinstance(task.state, dict) and hasattr(task.state, "values")
            else None,
        )
        for task in snapshot.tasks
    ]
    messages = snapshot.values.get("messages") if isinstance(snapshot.values, dict) else None
    values = dict(snapshot.values)
    if messages is not None:
        values["messages"] = [(m.type, m.content, m.id) for m in messages]
    return values, snapshot.next, [(i.id, i.value) for i in snapshot.interrupts], tasks


@dataclass
class PrunedStore(Store):
    """A store the prune tests drive, with a sync saver on the same database (`reader`),
    through which the test reads and writes rows of its own, whatever the API."""

    reader: Any = None


@contextlib.asynccontextmanager
async def pruned_store(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[PrunedStore]:
    async with open_store(kind, tmp_path, request) as store:
        if "sqlite" in kind:
            conn = sqlite3.connect(str(tmp_path / "threads.sqlite"), check_same_thread=False)
            with contextlib.closing(conn):
                yield PrunedStore(store.saver, store.is_async, SqliteSaver(conn))
        else:
            with PostgresSaver.from_conn_string(request.getfixturevalue("pg_uri")) as reader:
                yield PrunedStore(store.saver, store.is_async, reader)


async def prune(store: Store, **settings: Any) -> PruneReport:
    """A prune of the whole store, threads written just now included, through the API
    the store is driven with."""
    settings = {"min_idle": NOW, **settings}
    if store.is_async:
        return await aprune_threads(store.saver, **settings)
    return prune_threads(store.saver, **settings)


async def undo(store: Store, run_id: str) -> PruneUndoReport | None:
    if store.is_async:
        return await aundo_prune(store.saver, run_id)
    return undo_prune(store.saver, run_id)


def thread(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}
