"""Threads lost to their bytes, made by real graphs on real savers
(`docs/how-to/unreadable-threads.md`): text
holding U+0000 that PostgreSQL refuses, a dataclass whose module is gone, a head whose
stored bytes were cut short."""

from __future__ import annotations

import importlib
import sqlite3
import sys
import textwrap
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from langgraph_checkpoint_repair.stores import store_for
from tests.support.cli_runs import last_json, run_cli
from tests.support.seeding import config

NUL_TEXT = "page one\x00page two"


class TextState(TypedDict, total=False):
    text: str


def nul_graph(
    saver: BaseCheckpointSaver[Any], calls: list[str] | None = None, text: str = NUL_TEXT
) -> Any:
    """`extract` returns `text`, by default holding U+0000 (a PDF extract, say), into a
    `str` channel."""

    def extract(state: TextState) -> TextState:
        if calls is not None:
            calls.append("extract")
        return {"text": text}

    builder = StateGraph(TextState)
    builder.add_node("extract", extract)
    builder.add_edge(START, "extract")
    builder.add_edge("extract", END)
    return builder.compile(checkpointer=saver)


def brick_with_nul(saver: BaseCheckpointSaver[Any], thread_id: str) -> None:
    """Run `nul_graph` on a PostgreSQL saver: its put fails on the text, and the node's
    write stays pending, so every resume replays it and fails the same way."""
    graph = nul_graph(saver)
    try:
        graph.invoke({"text": "start"}, config(thread_id))
    except psycopg.errors.UntranslatableCharacter:
        return
    raise AssertionError("PostgreSQL took U+0000 in a JSONB value")


def write_module(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


ORDER_MODULE = """
from dataclasses import dataclass
from enum import Enum


@dataclass
class Order:
    sku: str
    qty: int


class Size(Enum):
    SMALL = "s"
    LARGE = "l"
"""
"""`Order` is stored as its own extension; a `Size` kept inside a message stays one
too (a message's fields are dumped by pydantic, which turns a dataclass into a dict)."""


def shop_module(folder: Path, prefix: str = "shop_models") -> ModuleType:
    """A module of its own (a fresh name each time, starting with `prefix`) defining
    the `Order` dataclass."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    write_module(folder, name, ORDER_MODULE)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))


class OrderState(TypedDict, total=False):
    order: Any
    note: str


def order_graph(saver: BaseCheckpointSaver[Any], shop: ModuleType) -> Any:
    """A graph that keeps an `Order` of `shop` in a channel."""

    def take_order(state: OrderState) -> OrderState:
        return {"order": shop.Order("a", 2), "note": "taken"}

    builder = StateGraph(OrderState)
    builder.add_node("take_order", take_order)
    builder.add_edge(START, "take_order")
    builder.add_edge("take_order", END)
    return builder.compile(checkpointer=saver)


def store_order(saver: BaseCheckpointSaver[Any], thread_id: str, shop: ModuleType) -> None:
    """`order_graph` run once on `saver`."""
    order_graph(saver, shop).invoke({"note": "new"}, config(thread_id))


def forget_module(module: ModuleType) -> None:
    """The module is renamed away: gone from disk and from this process."""
    path = Path(str(module.__file__))
    path.unlink()
    sys.modules.pop(module.__name__, None)
    importlib.invalidate_caches()
    from langgraph_checkpoint_repair.decoding.finders import importable, module_findable

    module_findable.cache_clear()
    importable.cache_clear()


def truncate_postgres_head(uri: str, thread_id: str, channel: str) -> None:
    """Cut the head's stored value of `channel` to its first bytes."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(
            "UPDATE checkpoint_blobs SET blob = substring(blob from 1 for 7) "
            "WHERE thread_id = %s AND channel = %s AND version = ("
            "  SELECT checkpoint -> 'channel_versions' ->> %s FROM checkpoints"
            "  WHERE thread_id = %s ORDER BY checkpoint_id DESC LIMIT 1)",
            (thread_id, channel, channel, thread_id),
        )


def truncate_sqlite_head(path: Path, thread_id: str) -> None:
    """Cut the head checkpoint's stored bytes (SQLite keeps it as one blob) short."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) "
            "WHERE thread_id = ? AND checkpoint_id = "
            "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?)",
            (thread_id, thread_id),
        )


@contextmanager
def application_saver(kind: str, tmp_path: Path, pg_uri: str) -> Iterator[tuple[str, Any]]:
    """The application's saver on a store of `kind` (SQLite in tmp_path, or the test's
    PostgreSQL schema), and the TARGET the command is given for it."""
    if kind == "sqlite":
        path = tmp_path / "threads.sqlite"
        with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
            saver: BaseCheckpointSaver[Any] = SqliteSaver(conn)
            saver.setup()  # type: ignore[attr-defined]
            yield f"sqlite:///{path}", saver
    else:
        with psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0) as conn:
            saver = PostgresSaver(conn)  # type: ignore[arg-type]
            saver.setup()
            yield pg_uri, saver


def stored_channel(saver: BaseCheckpointSaver[Any], thread_id: str, channel: str) -> bytes:
    """The bytes the head of `thread_id` stores for `channel`, as they are."""
    store = store_for(saver)
    head = store.head_id(thread_id, "")
    assert head is not None
    values = store.stored_values((thread_id, "", head)) or []
    (blob,) = [v.blob for v in values if v.channel == channel and v.task_id is None]
    assert blob is not None
    return blob


def scan_json(target: str, *more: str, **env: str) -> dict[str, Any]:
    """`scan --json` by the real command, which must exit 0; its JSON line."""
    done = run_cli("scan", target, "--min-idle", "0", "--json", *more, **env)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def thread_entry(report: dict[str, Any], thread_id: str) -> dict[str, Any]:
    (entry,) = [t for t in report["threads"] if t["thread_id"] == thread_id]
    assert isinstance(entry, dict)
    return entry
