"""The LangGraph checkpoint conformance suite reports the same for the wrapper as
for the raw saver: same capabilities detected, same tests passing."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_checkpoint_repair import PatchingCheckpointer

Factory = Callable[[], AsyncIterator[BaseCheckpointSaver[Any]]]
Wrap = Callable[[BaseCheckpointSaver[Any]], BaseCheckpointSaver[Any]]


def memory_factory(wrap: Wrap, _: Any) -> Factory:
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        yield wrap(InMemorySaver())

    return factory


def sqlite_factory(wrap: Wrap, tmp_path: Path) -> Factory:
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        path = tmp_path / f"{uuid.uuid4().hex}.sqlite"
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            yield wrap(saver)

    return factory


def postgres_factory(wrap: Wrap, server: str) -> Factory:
    """A fresh schema for every suite the runner starts."""

    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        schema = f"c_{uuid.uuid4().hex[:12]}"
        async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
            await conn.execute(f"CREATE SCHEMA {schema}")
        uri = f"{server}?options={quote(f'-c search_path={schema}')}"
        try:
            async with AsyncPostgresSaver.from_conn_string(uri) as saver:
                await saver.setup()
                yield wrap(saver)
        finally:
            async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
                await conn.execute(f"DROP SCHEMA {schema} CASCADE")

    return factory


async def conformance(name: str, factory: Factory) -> dict[str, tuple[Any, ...]]:
    report = await validate(checkpointer_test(name=name)(factory))
    return {
        capability: (r.detected, r.passed, r.tests_passed, r.tests_failed, r.tests_skipped)
        for capability, r in report.results.items()
    }


def wrapped(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    return PatchingCheckpointer(saver)


def unwrapped(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    return saver


BRINGS = {"prune", "copy_thread", "delete_for_runs"}
"""What the wrapper brings where the package writes the store's rows and the saver
(of the installed release) has none: LangGraph's own suite must find it and pass it
whole."""


@pytest.mark.parametrize("kind", ["InMemorySaver", "AsyncSqliteSaver", "AsyncPostgresSaver"])
async def test_conformance_report_is_identical_with_and_without_the_wrapper_but_what_it_brings(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    make: Callable[[Wrap, Any], Factory]
    arg: Any
    if kind == "InMemorySaver":
        make, arg = memory_factory, None
    elif kind == "AsyncSqliteSaver":
        make, arg = sqlite_factory, tmp_path
    else:
        make, arg = postgres_factory, request.getfixturevalue("postgres_server")

    raw = await conformance(f"raw {kind}", make(unwrapped, arg))
    patched = await conformance(f"patched {kind}", make(wrapped, arg))

    brought = {name for name, found in patched.items() if found[0] and not raw[name][0]}
    assert brought <= BRINGS and bool(brought) == (kind != "InMemorySaver"), brought
    for capability in brought:
        detected, passed, ran, failed, skipped = patched.pop(capability)
        assert passed and ran > 0 and failed == skipped == 0, capability
        raw.pop(capability)
    assert patched == raw
    for base in ("put", "put_writes", "get_tuple", "list", "delete_thread"):
        detected, passed, *_ = raw[base]
        assert detected and passed, f"{kind} fails base capability {base}"
