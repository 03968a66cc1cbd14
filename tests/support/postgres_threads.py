"""PostgreSQL stores written straight through a saver: chains of checkpoints put as a
graph leaves a thread, and real threads of every kind copied on the server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from psycopg.rows import dict_row

from langgraph_checkpoint_repair.stores.postgres.base import SCHEMA_SQL, claim_key
from tests.support.histories import ai, human
from tests.support.many_threads import multiply
from tests.support.seeding import config, seed
from tests.support.stores import Store

BROKEN = [human("a"), ai("a1", "c1"), human("b")]
CLEAN = [human("a"), ai("a1", text="hello")]


@contextlib.contextmanager
def saver_on(uri: str) -> Iterator[PostgresSaver]:
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        yield saver


def put_chain(saver: PostgresSaver, thread_id: str, ns: str, messages: list[Any]) -> None:
    """A first checkpoint (no parent) and a head on it, as a graph leaves a thread."""
    parent: Any = config(thread_id, ns)
    for step, values in enumerate(([], messages)):
        checkpoint = empty_checkpoint()
        version = saver.get_next_version(None, None)
        checkpoint["channel_values"] = {"messages": values}
        checkpoint["channel_versions"] = {"messages": version}
        metadata: Any = {"source": "loop", "step": step}
        parent = saver.put(parent, checkpoint, metadata, {"messages": version})


async def many_store(uri: str, saver: PostgresSaver, copies: int) -> list[str]:
    """Real threads of every kind (a subgraph's among them), copied on the server."""
    seeded = await seed(Store(saver, is_async=False))
    threads = [t for kind in seeded.threads.values() for t in kind]
    return multiply(uri, threads, copies)


@contextlib.contextmanager
def postgres(uri: str, serde: Any = None) -> Iterator[Store]:
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn, serde=serde)
        saver.setup()
        yield Store(saver, is_async=False)


def encrypted() -> EncryptedSerializer:
    return EncryptedSerializer.from_pycryptodome_aes(key=b"0123456789abcdef")


def hold_claim(conn: psycopg.Connection[Any], thread_id: str, checkpoint_ns: str = "") -> None:
    """Take the repair lock of a thread of the tables `conn` reads, as a run mid-repair
    holds it (for the session, until `conn` closes)."""
    row = conn.execute(SCHEMA_SQL).fetchone()
    assert row is not None
    conn.execute("SELECT pg_advisory_lock(%s, %s)", claim_key(thread_id, checkpoint_ns, row[0]))
