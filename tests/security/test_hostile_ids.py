"""Ids and stored text are data, never layout: a thread id, call id or message holding a
newline cannot start a line of its own in any output or log line, and Rich markup in
them (`[link=...]`, `[bold]`) is printed as written. The CLI in a child process on a
real SQLite store."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.agents import chat_graph
from tests.support.cli_runs import run_cli
from tests.support.histories import ai, human
from tests.support.seeding import config
from tests.support.stores import Store

FORGED = "FORGED"
LINK = "[link=http://x]y[/link]"
BOLD = "[bold]loud"
IDS = [f"evil\n{FORGED} repaired thread='victim'", LINK, BOLD]
TEXT = f"[bold]hi[/bold]\n{FORGED} text"


async def seed_hostile(path: Path) -> None:
    with SqliteSaver.from_conn_string(str(path)) as saver:
        store, chat = Store(saver, is_async=False), chat_graph(saver)
        for thread_id in IDS:
            history = [human(TEXT), ai("a1", f"c1[bold]\n{FORGED} call")]
            await store.update_state(chat, config(thread_id), {"messages": history}, "chat")


def assert_no_forged_line(*outputs: str) -> None:
    for output in outputs:
        for line in output.splitlines():
            assert not line.lstrip().startswith(FORGED), output


async def test_scan_list_keeps_each_thread_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    await seed_hostile(path)
    done = run_cli("scan", f"sqlite:///{path}", "--list", "--min-idle", "0")
    assert done.returncode == 0, done.stderr
    assert_no_forged_line(done.stdout, done.stderr)
    assert len(done.stdout.splitlines()) == len(IDS)
    assert LINK in done.stdout and BOLD in done.stdout


async def test_show_prints_ids_and_text_as_written(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    await seed_hostile(path)
    for thread_id in IDS:
        done = run_cli("show", f"sqlite:///{path}", "--thread", thread_id)
        assert done.returncode == 0, done.stderr
        assert_no_forged_line(done.stdout, done.stderr)
        assert "[bold]hi[/bold]" in done.stdout
        if thread_id in (LINK, BOLD):
            assert f"thread {thread_id}" in done.stdout


async def test_repair_verbose_logs_quote_ids(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    await seed_hostile(path)
    done = run_cli("repair", f"sqlite:///{path}", "--verbose", "--min-idle", "0")
    assert done.returncode == 0, done.stderr
    assert_no_forged_line(done.stdout, done.stderr)
    logged = [line for line in done.stderr.splitlines() if "repaired thread=" in line]
    assert len(logged) == len(IDS), done.stderr
    assert f"thread={LINK!r}" in done.stderr and f"thread={BOLD!r}" in done.stderr
    assert LINK in done.stdout and BOLD in done.stdout
