"""A pool that cannot hand out a connection says why, in one line (exit 2, nothing
written): the last failure its sessions met (a set-up statement past the role's
`statement_timeout`, a server that refuses connections), whether the pool is the
command's own (sync or async) or a factory's. Only a pool that met nothing at all says
it got no connection in time. Each cause is provoked on purpose, so the outcome never
depends on how busy the machine is."""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from psycopg_pool import PoolTimeout

from langgraph_checkpoint_repair.stores import faults
from langgraph_checkpoint_repair.stores.postgres.opening import apostgres_saver, postgres_saver
from tests.support.cli_runs import repairs_per_thread_postgres, run_cli
from tests.support.factories import POSTGRES_ENV, SLOW_SETUP
from tests.support.postgres_threads import BROKEN, put_chain, saver_on
from tests.support.tcp_relay import Relay

ERROR = "langgraph-repair: error: "
TIMED_OUT = f"{ERROR}a statement ran too long (statement_timeout): canceling statement due to "
REFUSED = f"{ERROR}cannot connect to PostgreSQL: "
CONFIG: RunnableConfig = {"configurable": {"thread_id": "bricked", "checkpoint_ns": ""}}
TOO_SLOW = ("SET statement_timeout = '1ms'", SLOW_SETUP)
"""A session set-up that always runs past its own limit."""


def one_error_line(done: Any) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    return str(line)


@pytest.mark.parametrize("factory", ["pooled_postgres_saver", "async_pooled_postgres_saver"])
def test_a_factory_pool_whose_set_up_runs_too_long_is_named(
    hurried_role: str, factory: str
) -> None:
    unhurried = hurried_role + quote(" -c statement_timeout=0")  # to seed the store
    with saver_on(unhurried) as saver:
        put_chain(saver, "bricked", "", BROKEN)
    target = f"tests.support.factories:{factory}"
    for command in ("scan", "repair"):
        done = run_cli(command, target, "--min-idle", "0", **{POSTGRES_ENV: hurried_role})
        assert one_error_line(done).startswith(TIMED_OUT + "statement timeout")
    assert repairs_per_thread_postgres(unhurried) == {}


@contextlib.contextmanager
def refusing_after_first(pg_uri: str) -> Iterator[str]:
    """`pg_uri` through a relay that lets one connection through (the command's check
    that the server answers) and refuses every later one (the pool's)."""
    server = urlsplit(pg_uri)
    relay = Relay((server.hostname or "127.0.0.1", server.port or 5432), accepts=1)
    try:
        yield relay.uri(pg_uri)
    finally:
        relay.close()


def test_a_server_that_refuses_the_pools_connections_is_named(pg_uri: str) -> None:
    with saver_on(pg_uri) as saver:
        put_chain(saver, "bricked", "", BROKEN)
    for command in ("scan", "repair"):
        with refusing_after_first(pg_uri) as through:
            line = one_error_line(run_cli(command, through, "--min-idle", "0"))
        assert line.startswith(REFUSED) and "refused" in line, line
    assert repairs_per_thread_postgres(pg_uri) == {}


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port on 127.0.0.1 that takes connections and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def test_a_pool_that_met_nothing_says_it_got_no_connection_in_time() -> None:
    with silent_server() as port:  # each connection attempt outlasts the pool's wait
        uri = f"postgresql://postgres@127.0.0.1:{port}/test?connect_timeout=30"
        target = "tests.support.factories:pooled_postgres_saver"
        done = run_cli("scan", target, **{POSTGRES_ENV: uri})
    line = one_error_line(done)
    assert line == f"{ERROR}no connection to the database: couldn't get a connection after 2.00 sec"


@pytest.fixture
def store(pg_uri: str) -> str:
    """`pg_uri`, with LangGraph's tables."""
    with saver_on(pg_uri):
        pass
    return pg_uri


def test_the_commands_sync_pool_names_its_set_up_failure(store: str) -> None:
    faults.watch_connection_failures()
    opened = postgres_saver(store, 1, False, TOO_SLOW, None)
    with pytest.raises(PoolTimeout) as raised, opened as saver:
        saver.get_tuple(CONFIG)
    assert isinstance(faults.named_cause(raised.value), psycopg.errors.QueryCanceled)


async def test_the_commands_async_pool_names_its_set_up_failure(store: str) -> None:
    faults.watch_connection_failures()
    with pytest.raises(PoolTimeout) as raised:
        async with apostgres_saver(store, 1, False, TOO_SLOW, None) as saver:
            await saver.aget_tuple(CONFIG)
    assert isinstance(faults.named_cause(raised.value), psycopg.errors.QueryCanceled)


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_the_commands_pools_name_a_refused_connection(store: str, asynchronous: bool) -> None:
    faults.watch_connection_failures()
    with refusing_after_first(store) as through, pytest.raises(PoolTimeout) as raised:
        if asynchronous:
            async with apostgres_saver(through, 1, False, (), None) as saver:
                await saver.aget_tuple(CONFIG)
        else:
            with postgres_saver(through, 1, False, (), None) as saver:
                saver.get_tuple(CONFIG)
    cause = faults.named_cause(raised.value)
    assert isinstance(cause, psycopg.OperationalError) and "refused" in str(cause), cause


def test_a_timeout_is_its_own_cause_until_a_pool_fails() -> None:
    timeout = PoolTimeout("couldn't get a connection after 5.00 sec")
    watcher = faults.watch_connection_failures()
    assert faults.named_cause(timeout) is timeout
    failure = psycopg.OperationalError("connection failed: Connection refused")
    logging.getLogger(faults.POOL_LOGGER).warning("error connecting in %r: %s", "pool-1", failure)
    assert watcher.last is failure and faults.named_cause(timeout) is failure
    other = ValueError("not a pool's")
    assert faults.named_cause(other) is other
