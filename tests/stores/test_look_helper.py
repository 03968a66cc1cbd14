"""The first-look helper process: the same verdicts as the look in this process,
whatever it is sent and whatever happens to it, and never left behind.

Every helper here is a real child process; those that misbehave run a real
script that misbehaves."""

from __future__ import annotations

import os
import signal
from typing import Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.decoding.strict import StrictSerializer
from langgraph_checkpoint_repair.stores.first_look import helper as look_helper
from langgraph_checkpoint_repair.stores.first_look.helper import LookHelper
from langgraph_checkpoint_repair.stores.first_look.plain import WALKS, plain_verdicts
from langgraph_checkpoint_repair.stores.postgres import PostgresStore
from tests.stores.test_plain_look_previous import hostile_blob
from tests.support.histories import ai, human, tool
from tests.support.needs import DELTA_REASON
from tests.support.seeding import config, seed
from tests.support.stores import Store

CALL = {"id": "a"}
AI = ormsgpack.Ext(
    5, ormsgpack.packb(["langchain_core.messages.ai", "AIMessage", {"tool_calls": [CALL]}, "v"])
)
TOOL = ormsgpack.Ext(
    5, ormsgpack.packb(["langchain_core.messages.tool", "ToolMessage", {"tool_call_id": "a"}, "v"])
)
CLEAN, BROKEN = ormsgpack.packb([AI, TOOL]), ormsgpack.packb([AI])
PAGE = [CLEAN, BROKEN, b"\xc1", b""] * 40  # clean, broken, not msgpack, empty


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie not yet reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_the_helper_answers_as_this_process_does() -> None:
    with LookHelper() as helper:
        assert helper.pid is not None
        assert helper.judge(PAGE) == plain_verdicts(PAGE)
        assert set(helper.judge(PAGE)) == {0, 1}
        assert helper.process is not None  # it answered: nothing was given up


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(hostile_blob(), min_size=1, max_size=10),
    st.integers(0, 99),
    st.none() | st.integers(0, 40) | st.just(2**70),
)
def test_hostile_blobs_get_the_same_verdicts_from_the_helper(
    drawn: list[bytes], n: int, budget: int | None
) -> None:
    """With a token budget or without: a budget too large for the wire is judged as the
    largest it carries, which clears the same histories."""
    blobs = (drawn * look_helper.MIN_BATCH)[: look_helper.MIN_BATCH + n]  # a page's worth
    with LookHelper() as helper:
        assert helper.judge(blobs, budget=budget) == plain_verdicts(blobs, budget=budget)
        assert helper.process is not None


def test_the_helper_judges_under_the_budget_it_is_sent() -> None:
    """A stored clean history of a few tokens, and a broken one: the budget reaches the
    helper, and the clean one's verdict changes with it."""
    serde = JsonPlusSerializer()
    clean = serde.dumps_typed([human("q"), ai("a1", "c1"), tool("c1")])[1]
    broken = serde.dumps_typed([human("q"), ai("a1", "c1")])[1]
    page = [clean, broken] * look_helper.MIN_BATCH
    with LookHelper() as helper:
        tight, loose = helper.judge(page, budget=1), helper.judge(page, budget=1000)
        assert helper.process is not None
    assert tight == plain_verdicts(page, budget=1) == bytes(len(page))
    assert loose == plain_verdicts(page, budget=1000) == plain_verdicts(page) == b"\x01\x00" * 64


def test_small_pages_stay_in_this_process() -> None:
    with LookHelper() as helper:
        pid = helper.pid
        os.kill(pid or 0, signal.SIGSTOP)  # a helper asked anything now would never answer
        try:
            small = PAGE[: look_helper.MIN_BATCH - 1]
            assert helper.judge(small) == plain_verdicts(small)
        finally:
            os.kill(pid or 0, signal.SIGCONT)


def test_a_killed_helper_is_replaced_by_the_look_here() -> None:
    with LookHelper() as helper:
        pid = helper.pid or 0
        os.kill(pid, signal.SIGKILL)
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        assert helper.judge(PAGE) == plain_verdicts(PAGE)
        assert helper.process is None
        assert helper.judge(PAGE) == plain_verdicts(PAGE)


@pytest.mark.parametrize(
    "answer",
    [
        "sys.stdout.buffer.write(b'\\x01' * 100000)",  # no header, all "clean"
        "sys.stdout.buffer.write(header + b'\\x02' * 80)",  # the right length, not verdicts
        "sys.stdout.buffer.write(header + b'\\x01' * 3)",  # too few, then gone
        "sys.stdout.buffer.write(struct.pack('<II', 7, 80) + b'\\x01' * 80)",  # another batch's
    ],
)
def test_a_helper_answering_wrongly_is_given_up(
    monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    script = (
        "import struct, sys\nheader = sys.stdin.buffer.read(8)\n"
        f"{answer}\nsys.stdout.buffer.flush()\n"
    )
    monkeypatch.setattr(look_helper, "_CHILD", script)
    with LookHelper() as helper:
        assert helper.judge(PAGE) == plain_verdicts(PAGE)
        assert helper.process is None


def test_a_silent_helper_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(look_helper, "_CHILD", "import time\ntime.sleep(60)\n")
    monkeypatch.setattr(look_helper, "ANSWER_TIMEOUT", 0.5)
    with LookHelper() as helper:
        pid = helper.pid or 0
        assert helper.judge(PAGE) == plain_verdicts(PAGE)
    assert not running(pid)


def test_the_helper_gets_no_secret_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://app:hunter2@db/prod")
    with LookHelper() as helper:
        with open(f"/proc/{helper.pid}/environ", "rb") as environ:
            names = {entry.split(b"=", 1)[0] for entry in environ.read().split(b"\0") if entry}
        assert helper.judge(PAGE) == plain_verdicts(PAGE)
        assert helper.process is not None
    assert b"DATABASE_URL" not in names and names <= {b"PATH", b"LD_LIBRARY_PATH"}


def test_stop_ends_the_helper() -> None:
    with LookHelper() as helper:
        pid = helper.pid or 0
        assert running(pid)
    assert not running(pid)


def test_ctrl_c_is_left_to_this_process() -> None:
    """Ctrl-C at a terminal signals its foreground process group: the helper is not in
    ours, and an interrupt sent to it straight is ignored."""
    with LookHelper() as helper:
        pid = helper.pid or 0
        assert os.getpgid(pid) != os.getpgid(0)
        assert helper.judge(PAGE) == plain_verdicts(PAGE)  # it is up and answering
        os.kill(pid, signal.SIGINT)
        assert helper.judge(PAGE) == plain_verdicts(PAGE)
        assert helper.process is not None


async def test_a_scan_with_the_helper_reports_as_one_without(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A real store and a real scan: the same report, and no helper left afterwards."""
    monkeypatch.setattr(look_helper, "MIN_BATCH", 2)
    started: list[int] = []
    enter = LookHelper.__enter__

    def noting(helper: LookHelper) -> LookHelper:
        enter(helper)
        started.append(helper.pid or 0)
        return helper

    monkeypatch.setattr(LookHelper, "__enter__", noting)
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        await seed(Store(saver, is_async=False), bricked=3)
        reports = scans_with_and_without_helper(saver, 4, monkeypatch)
    assert reports[True] == reports[False]
    assert reports[True]["needing"] > 0
    assert not given_up(caplog)
    assert len(started) == 2 and started[0] and not started[1]  # the second scan had none
    assert not running(started[0])


def test_a_delta_scan_with_the_helper_reports_as_one_without(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Delta threads (nothing stored at most heads): their walks go to the helper too."""
    pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
    from tests.support.delta_agents import delta_chat

    monkeypatch.setattr(look_helper, "MIN_BATCH", 2)
    kinds: list[int] = []
    send = LookHelper._send

    def noting(helper: LookHelper, items: list[bytes], kind: int, budget: int | None) -> int | None:
        kinds.append(kind)
        return send(helper, items, kind, budget)

    monkeypatch.setattr(LookHelper, "_send", noting)
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        chat = delta_chat(saver)
        for n in range(12):
            history = [human("q"), ai("a1", "c1"), *([tool("c1")] if n % 3 else []), human("b")]
            for message in history:
                chat.update_state(config(f"delta-{n}"), {"messages": [message]}, as_node="chat")
        reports = scans_with_and_without_helper(saver, 6, monkeypatch)
    assert reports[True] == reports[False]
    assert reports[True]["needing"] == 4
    assert WALKS in kinds
    assert not given_up(caplog)  # every answer came, in its turn


def given_up(caplog: pytest.LogCaptureFixture) -> bool:
    return any("helper stopped" in record.getMessage() for record in caplog.records)


def scans_with_and_without_helper(
    saver: PostgresSaver, page_size: int, monkeypatch: pytest.MonkeyPatch
) -> dict[bool, dict[str, Any]]:
    """What a strict scan of `saver`'s store reports, with the helper (True) and without."""
    strict = PostgresSaver(saver.conn, serde=StrictSerializer())
    reports = {}
    for helped in (True, False):
        monkeypatch.setattr(PostgresStore, "look_helper", helped)
        report = repair_threads(strict, dry_run=True, page_size=page_size)
        reports[helped] = {
            "scanned": report.threads_scanned,
            "needing": report.threads_needing_repair,
            "threads": sorted((r.thread_id, r.outcome) for r in report.threads),
        }
    return reports
