"""Threads whose newest checkpoints were cut short, for `--rewind-unreadable`: a real
chat graph runs a few turns on a real SQLite or PostgreSQL saver, then SQL cuts the
stored bytes of the head (and of its parents) as a bad disk or a bad migration would."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage

from tests.support.agents import chat_graph
from tests.support.seeding import config
from tests.support.stores import Store

TABLES = {
    "sqlite": ("checkpoints", "writes"),
    "postgres": ("checkpoints", "checkpoint_blobs", "checkpoint_writes"),
}


def family(kind: str) -> str:
    """The store's family: `sqlite` for SQLite savers, `postgres` for PostgreSQL ones."""
    return "sqlite" if "sqlite" in kind else "postgres"


async def chat_turns(store: Store, thread_id: str, turns: int = 3) -> None:
    """`turns` user turns on one thread, each answered: three checkpoints a turn."""
    graph = chat_graph(store.saver)
    for turn in range(turns):
        await store.invoke(graph, {"messages": [HumanMessage(f"turn {turn}")]}, config(thread_id))


def checkpoint_ids(kind: str, where: str, thread_id: str) -> list[str]:
    """The thread's checkpoint ids, newest first, read with SQL."""
    query = "SELECT checkpoint_id FROM checkpoints WHERE thread_id = {p} ORDER BY 1 DESC"
    return [row[0] for row in _query(kind, where, query, (thread_id,))]


def cut(kind: str, where: str, thread_id: str, *back: int) -> None:
    """Cut the stored bytes of the thread's checkpoints `back` steps from the head (0: the
    head): on SQLite the checkpoint's own blob, on PostgreSQL its messages blob."""
    ids = checkpoint_ids(kind, where, thread_id)
    for n in back:
        if family(kind) == "sqlite":
            query = (
                "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) "
                "WHERE thread_id = {p} AND checkpoint_id = {p}"
            )
            _execute(kind, where, query, (thread_id, ids[n]))
        else:
            query = (
                "UPDATE checkpoint_blobs SET blob = substring(blob from 1 for 7) "
                "WHERE thread_id = {p} AND channel = 'messages' AND version = ("
                "  SELECT checkpoint -> 'channel_versions' ->> 'messages' FROM checkpoints"
                "  WHERE thread_id = {p} AND checkpoint_id = {p})"
            )
            _execute(kind, where, query, (thread_id, thread_id, ids[n]))


def cut_all(kind: str, where: str, thread_id: str) -> None:
    """Cut every stored value of the thread: no checkpoint of it decodes."""
    if family(kind) == "sqlite":
        cut(kind, where, thread_id, *range(len(checkpoint_ids(kind, where, thread_id))))
        return
    query = (
        "UPDATE checkpoint_blobs SET blob = substring(blob from 1 for 7) "
        "WHERE thread_id = {p} AND type = 'msgpack'"
    )
    _execute(kind, where, query, (thread_id,))


def set_parent(kind: str, where: str, thread_id: str, checkpoint_id: str, parent: str) -> None:
    query = (
        "UPDATE checkpoints SET parent_checkpoint_id = {p} "
        "WHERE thread_id = {p} AND checkpoint_id = {p}"
    )
    _execute(kind, where, query, (parent, thread_id, checkpoint_id))


def all_rows(kind: str, where: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of LangGraph's tables, sorted: to prove a run wrote nothing."""
    return {
        table: sorted(_query(kind, where, f"SELECT * FROM {table}", ()), key=repr)
        for table in TABLES[family(kind)]
    }


def raw_row(kind: str, where: str, thread_id: str, checkpoint_id: str) -> tuple[Any, ...]:
    """(type, checkpoint, metadata) of one checkpoint, as stored."""
    query = (
        "SELECT type, checkpoint, metadata FROM checkpoints "
        "WHERE thread_id = {p} AND checkpoint_id = {p}"
    )
    (row,) = _query(kind, where, query, (thread_id, checkpoint_id))
    return tuple(row)


def _query(kind: str, where: str, query: str, params: tuple[Any, ...]) -> list[Any]:
    if family(kind) == "sqlite":
        with closing(sqlite3.connect(where)) as conn:
            return conn.execute(query.format(p="?"), params).fetchall()
    with psycopg.connect(where, autocommit=True) as pg:
        return pg.execute(query.format(p="%s"), params).fetchall()


def _execute(kind: str, where: str, query: str, params: tuple[Any, ...]) -> None:
    if family(kind) == "sqlite":
        with closing(sqlite3.connect(where)) as conn, conn:
            conn.execute(query.format(p="?"), params)
        return
    with psycopg.connect(where, autocommit=True) as pg:
        pg.execute(query.format(p="%s"), params)


def sqlite_path(tmp_path: Path) -> str:
    """Where `open_store` keeps a SQLite store."""
    return str(tmp_path / "threads.sqlite")
