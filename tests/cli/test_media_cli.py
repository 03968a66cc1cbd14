"""Real threads bricked by content, repaired from the command line: a screenshot over
Anthropic's 5 MB limit, an image in a tool result for OpenAI Chat Completions, a 1.2 MB
tool output. No copy of the removed bytes is written, undo brings them back exactly,
`show` and `scan --list` name the image without its bytes. Real graphs, agents and
savers; only the chat model is a fake."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai.chat_models.base import _construct_responses_api_input
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from PIL import Image

from langgraph_checkpoint_repair.cli import main
from tests.support import media_threads
from tests.support.agents import thread
from tests.support.batch_runs import head_messages
from tests.support.cli_runs import last_json, run_cli
from tests.support.histories import holds, results
from tests.support.media import ANTHROPIC_LIMIT, MB
from tests.support.media_model import OpenAIBadRequest, media_claude, openai_chat
from tests.support.media_threads import CALL_ID, SHOT, URL, Payload, agent, brick, screenshot_tool
from tests.support.stores import Store

big = media_threads.big  # the fixtures: a screenshot over Anthropic's limit, and a small one
small = media_threads.small
NOT_TEXT = r"Invalid value: 'image_url'\. Supported values are: 'text'\."


# 1. The command line repairs in a real process, on SQLite and PostgreSQL.


@pytest.fixture(params=["sqlite", "postgres"])
def cli_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, str]]:
    """A real store and the TARGET the command line names it by."""
    if request.param == "sqlite":
        path = tmp_path / "threads.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            yield Store(saver, is_async=False), f"sqlite:///{path}"
    else:
        uri = request.getfixturevalue("pg_uri")
        with PostgresSaver.from_conn_string(uri) as pg:
            pg.setup()
            yield Store(pg, is_async=False), uri


def sqlite_path(target: str) -> Path:
    return Path(target.removeprefix("sqlite:///"))


def sqlite_connection(target: str) -> contextlib.closing[sqlite3.Connection]:
    uri = f"{sqlite_path(target).absolute().as_uri()}?mode=rw"
    return contextlib.closing(sqlite3.connect(uri, uri=True))


def sqlite_checkpoint_rows(target: str, ids: Sequence[str]) -> list[bytes]:
    """The raw checkpoint, metadata and write rows of these checkpoints."""
    marks = ",".join("?" * len(ids))
    with sqlite_connection(target) as conn:
        rows = conn.execute(
            f"SELECT checkpoint, metadata FROM checkpoints WHERE checkpoint_id IN ({marks})", ids
        ).fetchall()
        writes = conn.execute(
            f"SELECT value FROM writes WHERE checkpoint_id IN ({marks})", ids
        ).fetchall()
    return [bytes(value) for row in [*rows, *writes] for value in row if value is not None]


RUN_CHECKPOINTS = {
    "sqlite": "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
    "WHERE json_extract(CAST(metadata AS TEXT), '$.langgraph_repair_run') = ?",
    "postgres": "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
    "WHERE metadata->>'langgraph_repair_run' = %s",
}


def checkpoints_of_run(target: str, run_id: str) -> list[tuple[str, str]]:
    """(checkpoint id, parent id) of each checkpoint the run wrote."""
    if target.startswith("sqlite:"):
        with sqlite_connection(target) as conn:
            rows = conn.execute(RUN_CHECKPOINTS["sqlite"], (run_id,)).fetchall()
    else:
        with psycopg.connect(target) as pg:
            rows = pg.execute(RUN_CHECKPOINTS["postgres"], (run_id,)).fetchall()
    return [(str(a), str(b)) for a, b in rows]


def postgres_rows(uri: str, checkpoint_id: str) -> list[bytes]:
    """The raw rows a checkpoint brought: its own row (checkpoint and metadata), the
    blobs of the channel versions it changed, its writes."""
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT thread_id, checkpoint_ns, parent_checkpoint_id, checkpoint, metadata "
            "FROM checkpoints WHERE checkpoint_id = %s",
            (checkpoint_id,),
        ).fetchone()
        assert row is not None
        thread_id, ns, parent_id, checkpoint, metadata = row
        parent = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND checkpoint_id = %s",
            (thread_id, ns, parent_id),
        ).fetchone()
        old = parent[0]["channel_versions"] if parent else {}
        found = [json.dumps(checkpoint).encode(), json.dumps(metadata).encode()]
        for channel, version in checkpoint["channel_versions"].items():
            if old.get(channel) == version:
                continue
            blobs = conn.execute(
                "SELECT blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s "
                "AND channel = %s AND version = %s",
                (thread_id, ns, channel, version),
            ).fetchall()
            found += [bytes(b[0]) for b in blobs if b[0] is not None]
        writes = conn.execute(
            "SELECT blob FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND checkpoint_id = %s",
            (thread_id, ns, checkpoint_id),
        ).fetchall()
        found += [bytes(w[0]) for w in writes if w[0] is not None]
    return found


def postgres_audit_rows(uri: str) -> list[bytes]:
    """Every row of the repair's own audit tables, as text."""
    with psycopg.connect(uri) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() AND table_name LIKE 'langgraph_repair%%'"
            ).fetchall()
        ]
        return [
            str(r[0]).encode()
            for table in tables
            for r in conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()
        ]


def postgres_head_messages_blob(uri: str, thread_id: str) -> bytes:
    """The raw blob of the head's `messages` value."""
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT b.blob FROM checkpoints c JOIN checkpoint_blobs b ON b.thread_id = "
            "c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint->'channel_versions'->>'messages' "
            "WHERE c.thread_id = %s AND c.checkpoint_ns = '' "
            "ORDER BY c.checkpoint_id DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
    assert row is not None
    return bytes(row[0])


def rows_written_by(target: str, run_id: str) -> tuple[list[bytes], list[bytes]]:
    """The raw rows the run wrote, and the rows of the checkpoints it repaired."""
    if target.startswith("sqlite:"):
        pairs = checkpoints_of_run(target, run_id)
        assert pairs
        written = sqlite_checkpoint_rows(target, [new for new, _ in pairs])
        sources = sqlite_checkpoint_rows(target, [old for _, old in pairs])
        return written, sources
    pairs = checkpoints_of_run(target, run_id)
    assert pairs
    written = [row for new, _ in pairs for row in postgres_rows(target, new)]
    sources = [row for _, old in pairs for row in postgres_rows(target, old)]
    return written + postgres_audit_rows(target), sources


def cli_json(*argv: str) -> dict[str, Any]:
    done = run_cli(*argv)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


async def test_the_command_line_repairs_without_a_copy_and_undo_restores_the_bytes(
    cli_store: tuple[Store, str], big: Payload
) -> None:
    store, target = cli_store
    config = await brick(store, big)
    thread_id = config["configurable"]["thread_id"]
    before = await head_messages(store, thread_id)
    on_postgres = isinstance(store.saver, PostgresSaver)
    raw_before = postgres_head_messages_blob(target, thread_id) if on_postgres else b""
    repair = ("repair", target, "--policy", "provider=anthropic", "--min-idle", "0", "--json")

    report = cli_json(*repair)
    assert (report["threads_repaired"], report["actions"]) == (1, {"media_removed": 1})
    written, sources = rows_written_by(target, report["run_id"])
    needle = big.slice.encode()
    assert any(needle in row for row in sources)  # the search finds the stored image
    assert not [row[:80] for row in written if needle in row]
    (repaired,) = results(await head_messages(store, thread_id))
    assert repaired.content == [
        {"type": "text", "text": f"Screenshot of {URL}"},
        {"type": "text", "text": big.placeholder},
    ]
    assert repaired.artifact == {"png_base64": "[removed]", "url": URL}

    undo = cli_json("undo", target, "--run", report["run_id"], "--json")
    assert (undo["threads_restored"], undo["threads_skipped"], undo["errors"]) == (1, 0, [])
    restored = await head_messages(store, thread_id)
    assert [m.model_dump() for m in restored] == [m.model_dump() for m in before]
    (image_result,) = results(restored)
    assert base64.b64decode(image_result.content[1]["base64"]) == big.png  # type: ignore[index]
    if raw_before:
        assert postgres_head_messages_blob(target, thread_id) == raw_before

    assert cli_json(*repair)["threads_repaired"] == 1
    model = media_claude("It shows the Example Domain page.")
    question = {"messages": [HumanMessage("What did you see?", id="h3")]}
    graph = agent(model, store.saver, [screenshot_tool(big)])
    out = await store.invoke(graph, question, config)
    assert out["messages"][-1].content == "It shows the Example Domain page."
    assert not holds(model.received[-1], big.slice)


# 2. media=downscale: the image stays, re-encoded within the limit.


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[tuple[Store, str]]:
    path = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield Store(saver, is_async=False), f"sqlite:///{path}"


def run_main(*argv: str) -> dict[str, Any]:
    """The command line in this process; its JSON report."""
    out = io.StringIO()
    assert main([*argv, "--json"], out=out) == 0
    parsed: dict[str, Any] = json.loads(out.getvalue().strip().splitlines()[-1])
    return parsed


async def test_downscale_stores_a_smaller_png_claude_takes(
    sqlite_store: tuple[Store, str], big: Payload
) -> None:
    store, target = sqlite_store
    config = await brick(store, big)
    thread_id = config["configurable"]["thread_id"]
    policy = ("--policy", "provider=anthropic", "--policy", "media=downscale")
    report = run_main("repair", target, *policy, "--min-idle", "0")
    assert (report["threads_repaired"], report["actions"]) == (1, {"media_downscaled": 1})

    (result,) = results(await head_messages(store, thread_id))
    assert isinstance(result.content, list)
    text, image = result.content
    assert text == {"type": "text", "text": f"Screenshot of {URL}"}
    assert isinstance(image, dict)
    assert (image["type"], image["mime_type"]) == ("image", "image/png")
    assert len(image["base64"]) <= ANTHROPIC_LIMIT
    with Image.open(io.BytesIO(base64.b64decode(image["base64"]))) as png:
        png.load()
        assert png.format == "PNG"
        assert png.width == png.height < 1200  # the same square, smaller
    assert big.slice not in json.dumps(result.model_dump(), default=str)

    model = media_claude("A noisy square.")
    question = {"messages": [HumanMessage("Describe it.", id="h3")]}
    out = await store.invoke(agent(model, store.saver, [screenshot_tool(big)]), question, config)
    assert out["messages"][-1].content == "A noisy square."
    (seen,) = results(model.received[-1])
    assert seen.content[1] == image


# 3. max_result_chars: a 1.2 MB tool output cut to its head and tail.


LOG_LINES = 40_000


@tool
def read_log(service: str) -> str:
    """Read a service's whole log."""
    lines = [f"{n:06d} {service} GET /health 200 OK" for n in range(LOG_LINES)]
    return "\n".join(["BEGIN LOG", *lines, "END LOG"])


async def test_max_result_chars_cuts_a_huge_tool_result_and_the_thread_goes_on(
    sqlite_store: tuple[Store, str],
) -> None:
    store, target = sqlite_store
    config = thread()
    call = AIMessage("", tool_calls=[{"name": "read_log", "args": {"service": "api"}, "id": "c1"}])
    first = agent(media_claude(call, "The api is healthy."), store.saver, [read_log])
    await store.invoke(first, {"messages": [HumanMessage("Is the api ok?", id="h1")]}, config)
    thread_id = config["configurable"]["thread_id"]
    (stored,) = results(await head_messages(store, thread_id))
    assert isinstance(stored.content, str) and len(stored.content) > 1_200_000

    scan = run_main("scan", target, "--policy", "max_result_chars=2000", "--min-idle", "0")
    assert scan["actions"] == {"result_truncated": 1}
    assert run_main("scan", target, "--min-idle", "0")["threads_needing_repair"] == 0
    report = run_main("repair", target, "--policy", "max_result_chars=2000", "--min-idle", "0")
    assert (report["threads_repaired"], report["actions"]) == (1, {"result_truncated": 1})

    (cut,) = results(await head_messages(store, thread_id))
    assert isinstance(cut.content, str)
    assert len(cut.content) <= 2000
    assert cut.content.startswith(stored.content[:500])
    assert cut.content.endswith(stored.content[-500:])
    assert "characters of this tool result removed" in cut.content
    kept = ("tool_call_id", "name", "status", "id")
    assert [getattr(cut, f) for f in kept] == [getattr(stored, f) for f in kept]

    model = media_claude("Still healthy.")
    question = {"messages": [HumanMessage("And now?", id="h2")]}
    out = await store.invoke(agent(model, store.saver, [read_log]), question, config)
    assert out["messages"][-1].content == "Still healthy."
    assert results(model.received[-1])[0].content == cut.content
    again = run_main("scan", target, "--policy", "max_result_chars=2000", "--min-idle", "0")
    assert again["threads_needing_repair"] == 0


# 4. show and scan --list: kind, type and size, never the bytes.


async def test_show_and_scan_list_name_the_image_without_its_bytes(
    sqlite_store: tuple[Store, str], big: Payload
) -> None:
    store, target = sqlite_store
    config = await brick(store, big)
    thread_id = config["configurable"]["thread_id"]
    argv = ("show", target, "--thread", thread_id, "--policy", "provider=anthropic")
    shown = run_cli(*argv, "--json")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout) < 20_000
    assert big.slice not in shown.stdout
    preview = last_json(shown.stdout)
    summary = {"type": "image", "kind": "image", "mime_type": "image/png", "bytes": len(big.png)}
    assert preview["before"][2]["content"] == [
        {"type": "text", "text": f"Screenshot of {URL}"},
        summary,
    ]
    assert preview["after"][2]["content"][1] == {"type": "text", "text": big.placeholder}
    (action,) = preview["actions"]
    assert (action["kind"], action["tool_call_id"], action["tool_name"], action["index"]) == (
        "media_removed",
        CALL_ID,
        "screenshot",
        2,
    )
    size = f"{len(big.png) / MB:.1f} MB"
    assert action["detail"].startswith(f"image image/png {size}")

    human = run_cli(*argv, COLUMNS="300")
    assert human.returncode == 0, human.stderr
    assert len(human.stdout) < 20_000
    assert big.slice not in human.stdout
    assert f"[image image/png {size}]" in human.stdout
    assert f"media_removed: call #{CALL_ID} screenshot (message 2)" in human.stdout

    listed = run_cli("scan", target, "--list", "--policy", "provider=anthropic", "--min-idle", "0")
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.strip().splitlines()
    assert line.split("\t")[0] == thread_id
    assert line.split("\t")[-1] == "media_removed"
    plain = run_cli("scan", target, "--list", "--min-idle", "0")
    assert plain.stdout.strip() == ""


# 5. OpenAI Chat Completions takes no image in a tool result; the Responses API does.


async def test_openai_chat_gets_the_image_out_of_the_tool_result_responses_keeps_it(
    sqlite_store: tuple[Store, str], small: Payload
) -> None:
    store, target = sqlite_store
    config = thread()
    thread_id = config["configurable"]["thread_id"]
    tools = [screenshot_tool(small)]
    ask = {"messages": [HumanMessage(f"What is on {URL}?", id="h1")]}
    with pytest.raises(OpenAIBadRequest, match=NOT_TEXT):
        await store.invoke(agent(openai_chat(SHOT, "unused"), store.saver, tools), ask, config)
    again = {"messages": [HumanMessage("Hello?", id="h2")]}
    with pytest.raises(OpenAIBadRequest, match=NOT_TEXT):
        await store.invoke(agent(openai_chat("unused"), store.saver, tools), again, config)

    stored = await head_messages(store, thread_id)
    (output,) = [i for i in _construct_responses_api_input(stored) if "output" in i]
    assert output["output"][1]["type"] == "input_image"  # what Responses is sent, and takes
    responses = ("--policy", "provider=openai-responses", "--min-idle", "0")
    assert run_main("scan", target, *responses)["threads_needing_repair"] == 0

    chat = ("--policy", "provider=openai", "--min-idle", "0")
    report = run_main("repair", target, *chat)
    assert (report["threads_repaired"], report["actions"]) == (1, {"media_removed": 1})
    (result,) = results(await head_messages(store, thread_id))
    assert result.content[0] == {"type": "text", "text": f"Screenshot of {URL}"}
    assert result.content[1] == {
        "type": "text",
        "text": f"[image removed: image/png, {len(small.png) // 1024} KB; "
        "openai takes no media in tool results]",
    }
    model = openai_chat("It shows the Example Domain page.")
    question = {"messages": [HumanMessage("What did you see?", id="h3")]}
    out = await store.invoke(agent(model, store.saver, tools), question, config)
    assert out["messages"][-1].content == "It shows the Example Domain page."
