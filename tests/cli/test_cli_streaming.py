"""`scan --list` and `scan --json` write each broken head as its page is done, not at the
end: a real child process on a real PostgreSQL store whose second page a relay holds
while the test reads what the first page printed. Then the run goes on, is stopped by
a signal, loses its connection or its reader, and what it printed is still what the
docs promise."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar
from urllib.parse import urlsplit

import pytest

from langgraph_checkpoint_repair.cli.output import OPENING
from tests.support.cli_runs import run_cli, start_cli
from tests.support.many_threads import multiply
from tests.support.postgres_threads import BROKEN, CLEAN, put_chain, saver_on
from tests.support.tcp_relay import Relay

COPIES = 1500  # of a broken and a clean thread: about 3,000 heads, three pages and more
SCAN = ("scan", "--min-idle", "0")
LOST = "langgraph-repair: error: lost the database: "
T = TypeVar("T")


@pytest.fixture
def store(pg_uri: str) -> str:
    with saver_on(pg_uri) as saver:
        put_chain(saver, "broken", "", BROKEN)
        put_chain(saver, "clean", "", CLEAN)
    multiply(pg_uri, ["broken", "clean"], COPIES)
    return pg_uri


@pytest.fixture
def relay(store: str) -> Iterator[Relay]:
    """A relay in front of the store's server that holds or cuts the second head page."""
    server = urlsplit(store)
    relay = Relay((server.hostname or "127.0.0.1", server.port or 5432))
    try:
        yield relay
    finally:
        relay.release()
        relay.close()


def listed(store: str) -> list[str]:
    """What `scan --list` prints when nothing stands in its way: the reference."""
    done = run_cli(*SCAN, store, "--list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == COPIES + 1
    return lines


def within(read: Callable[[], T], seconds: float = 60) -> T:
    """`read()`, failing the test instead of hanging when nothing comes."""
    with ThreadPoolExecutor(1) as reader:
        return reader.submit(read).result(timeout=seconds)


def started_held(relay: Relay, store: str, *argv: str) -> subprocess.Popen[str]:
    relay.arm(skip=1, hold=True)  # the first head page passes, the second waits
    return start_cli(*SCAN, relay.uri(store), *argv)


def rest_of(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of stdout, through the reader that already holds some of it (unlike
    `communicate`), and stderr, once the process has ended."""
    assert process.stdout is not None and process.stderr is not None
    rest = within(process.stdout.read, 120)
    process.wait(timeout=60)
    return rest, process.stderr.read()


def test_scan_list_prints_the_first_page_while_the_run_waits_for_the_second(
    store: str, relay: Relay
) -> None:
    reference = listed(store)
    process = started_held(relay, store, "--list")
    try:
        first = within(process.stdout.readline)  # type: ignore[union-attr]
        assert relay.held.is_set() and process.poll() is None  # the run is under way
        relay.release()
        rest, stderr = rest_of(process)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    assert (first + rest).splitlines() == reference  # the same lines, in the same order


def test_scan_json_stopped_by_a_signal_is_one_document_of_what_it_saw(
    store: str, relay: Relay
) -> None:
    reference = [line.split("\t")[0] for line in listed(store)]
    process = started_held(relay, store, "--json")
    try:
        start = within(lambda: process.stdout.read(len(OPENING)))  # type: ignore[union-attr]
        assert start == OPENING and relay.held.is_set() and process.poll() is None
        process.send_signal(signal.SIGINT)
        relay.release()
        rest, stderr = rest_of(process)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "stopped by SIGINT" in stderr and "Traceback" not in stderr
    assert rest.endswith("}\n") and "\n" not in rest[:-1]  # one line
    report = json.loads(start + rest)
    assert report["stopped"] is True
    threads = [thread["thread_id"] for thread in report["threads"]]
    assert 0 < len(threads) == report["threads_needing_repair"] < len(reference)
    assert threads == reference[: len(threads)]  # the first page's, as a full run lists them


def test_scan_json_that_loses_its_connection_is_one_document_with_the_summary(
    store: str, relay: Relay
) -> None:
    reference = [line.split("\t")[0] for line in listed(store)]
    relay.arm(skip=1)  # the second head page is cut after 100 of its rows
    done = run_cli(*SCAN, relay.uri(store), "--json")
    assert relay.cut.is_set()
    assert done.returncode == 2, done.stderr  # a scan writes nothing: a connection error
    errors = [line for line in done.stderr.splitlines() if line.startswith("langgraph-repair:")]
    assert len(errors) == 1 and errors[0].startswith(LOST), done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stdout.splitlines()
    report = json.loads(line)
    assert report["stopped"] is True and report["errors"] == []
    threads = [thread["thread_id"] for thread in report["threads"]]
    assert 0 < len(threads) == report["threads_needing_repair"] < len(reference)
    assert threads == reference[: len(threads)]


def test_scan_list_whose_reader_goes_away_ends_quietly(store: str, relay: Relay) -> None:
    process = started_held(relay, store, "--list")
    try:
        within(process.stdout.readline)  # type: ignore[union-attr]
        process.stdout.close()  # type: ignore[union-attr]  # as `| head -n 1` does
        relay.release()
        code = process.wait(timeout=120)
        stderr = process.stderr.read()  # type: ignore[union-attr]
    finally:
        process.kill()
    assert code == 141, stderr  # 128 + SIGPIPE, as a pipe's writer ends
    assert stderr == ""
