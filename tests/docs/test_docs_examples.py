"""Every Python and shell example in docs/ and in README.md runs, so none can rot.

Sybil runs them. It has been maintained since 2017, parses Markdown fences into
examples that share one namespace per page (a guide's blocks build on each other, as a
reader runs them), skips or hides a block with an HTML comment that Markdown does not
show, and takes an evaluator of our own per fence language, which the shell, YAML, JSON
and SQL blocks need. pytest-markdown-docs and pytest-examples run Python fences only.

Each page is one test and runs in a fresh folder holding `threads.sqlite`, a store
seeded with clean, bricked, in-flight and hand-broken threads (tests/support/seeding.py). Its
Python blocks find ready what a reader's application has: `builder` (an uncompiled graph
whose model rejects broken histories as a provider does), `model`, `tools`, `history` (a
broken message list), `saver` (a SqliteSaver on the store), `config` (a bricked
thread's) and, where the page uses it, `DB_URI` (also in the shell's environment: a
fresh PostgreSQL schema, as tests/conftest.py makes one per test) and `REDIS_URL` (a
Redis server of the tests' own, emptied). Shell blocks run in
bash with `set -euo pipefail` and `langgraph-repair` on PATH; YAML and JSON blocks must
parse; SQL blocks run on PostgreSQL in a fresh schema, with their role names made
unique, and each role must then do what it was granted: `scan`, and `repair` for a role
granted INSERT (with `--policy stale_resume=keep` where it was not granted DELETE on the
pending writes: the read-mostly policy). A text block right after a Python block that
printed must show what it printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import SkipTest
from urllib.parse import quote

import psycopg
import pytest
import yaml
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from tests.support.fakes import ProviderModel
from tests.support.seeding import seed
from tests.support.stores import Store

sybil = pytest.importorskip("sybil", reason="the docs examples need the dev extra's sybil")
markdown = pytest.importorskip("sybil.parsers.markdown")

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NEEDS = {
    "how-to/deep-agents.md": "deepagents",
    "how-to/keep-a-store-small.md": "deepagents",
    "how-to/redis-stores.md": "langgraph.checkpoint.redis",
}
OWN_PROCESS = {"how-to/opentelemetry.md"}
"""Pages whose Python blocks each run in a process of their own: they set process-wide
state (OpenTelemetry's global meter provider can be set once)."""


def run_shell(example: Any) -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGGRAPH_REPAIR_")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    for given in ("DB_URI", "REDIS_URL"):
        if given in example.namespace:
            env[given] = example.namespace[given]
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", example.parsed],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    if done.returncode != 0:
        raise AssertionError(f"exit {done.returncode}\n{done.stdout}\n{done.stderr}")


def check_output(example: Any) -> None:
    """A text block right after a Python block that printed shows what it printed."""
    printed = example.namespace.get("PRINTED", "")
    if printed and example.parsed.strip() != printed:
        raise AssertionError(f"the block above printed\n{printed}")


def run_python(example: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-c", example.parsed], capture_output=True, text=True, timeout=180
    )
    if done.returncode != 0:
        raise AssertionError(f"exit {done.returncode}\n{done.stdout}\n{done.stderr}")


def parse_yaml(example: Any) -> None:
    assert list(yaml.safe_load_all(example.parsed)), "empty YAML"


def parse_json(example: Any) -> None:
    for line in example.parsed.strip().split("\n\n"):
        json.loads(line)


def run_sql(example: Any) -> None:
    """The block, as the owner, in a fresh migrated schema, its roles made unique; then
    every role it grants to must be able to `scan`, and one granted INSERT to `repair`."""
    server = example.namespace["POSTGRES_SERVER"]
    schema, tag = f"t_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex[:8]
    roles: dict[str, str] = {}

    def unique(match: re.Match[str]) -> str:
        roles[match[1]] = f"{match[1]}_{tag}"
        return f"TO {roles[match[1]]}"

    sql = re.sub(r"TO (\w+)", unique, example.parsed)
    writers = {roles[name] for name in re.findall(r"GRANT INSERT [^;]* TO (\w+);", example.parsed)}
    deleting = r"GRANT [^;]*DELETE ON [^;]*checkpoint_writes[^;]* TO (\w+);"
    deleters = {roles[name] for name in re.findall(deleting, example.parsed)}
    separator = "&" if "?" in server else "?"
    uri = f"{server}{separator}options={quote(f'-c search_path={schema}')}"
    cli = str(Path(sys.executable).parent / "langgraph-repair")
    with psycopg.connect(server, autocommit=True) as owner:
        owner.execute(f"CREATE SCHEMA {schema}")
        try:
            with PostgresSaver.from_conn_string(uri) as saver:
                saver.setup()
            subprocess.run([cli, "migrate", uri], check=True, capture_output=True)
            for role in roles.values():
                owner.execute(f"CREATE ROLE {role} LOGIN")
                owner.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            owner.execute(f"SET search_path TO {schema}")
            owner.execute(sql)
            for role in roles.values():
                as_role = uri.replace("//postgres@", f"//{role}@", 1)
                policy = [] if role in deleters else ["--policy", "stale_resume=keep"]
                repair = ["repair", "--min-idle", "0", *policy]
                commands = [["scan"], *([repair] if role in writers else [])]
                for command in commands:
                    done = subprocess.run([cli, *command, as_role], capture_output=True, text=True)
                    assert done.returncode == 0, f"{command[0]} as {role}: {done.stderr}"
        finally:
            owner.execute(f"DROP SCHEMA {schema} CASCADE")
            for role in roles.values():
                owner.execute(f"DROP OWNED BY {role}")
                owner.execute(f"DROP ROLE {role}")


def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"It is sunny in {city}."


def namespace(store: Path) -> Iterator[dict[str, Any]]:
    """What the examples take as given: the reader's graph, model, tools and store."""
    model = ProviderModel(messages=itertools.cycle(["Sure."]))
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}
    history = [HumanMessage("Weather?"), AIMessage("", tool_calls=[call]), HumanMessage("Joke?")]
    connection = sqlite3.connect(store, check_same_thread=False)
    yield {
        "builder": builder,
        "model": model,
        "tools": [get_weather],
        "history": history,
        "saver": SqliteSaver(connection),
        "config": {"configurable": {"thread_id": "bricked-0"}},
    }
    connection.close()


OTHER_PARSERS = [
    markdown.SkipParser(),
    *(markdown.CodeBlockParser(language, run_shell) for language in ("bash", "sh")),
    markdown.CodeBlockParser("yaml", parse_yaml),
    markdown.CodeBlockParser("json", parse_json),
    markdown.CodeBlockParser("sql", run_sql),
    markdown.CodeBlockParser("text", check_output),
]
SYBIL = sybil.Sybil(parsers=[markdown.PythonCodeBlockParser(), *OTHER_PARSERS])
OWN_PROCESS_SYBIL = sybil.Sybil(
    parsers=[markdown.CodeBlockParser("python", run_python), *OTHER_PARSERS]
)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_example_on_the_page_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    name = page.relative_to(ROOT / "docs").as_posix() if "docs" in page.parts else ""
    needed = NEEDS.get(name)
    if needed:
        pytest.importorskip(needed)
    store = tmp_path / "threads.sqlite"
    with SqliteSaver.from_conn_string(str(store)) as seeding:
        asyncio.run(seed(Store(seeding, is_async=False)))
    monkeypatch.chdir(tmp_path)
    document = (OWN_PROCESS_SYBIL if name in OWN_PROCESS else SYBIL).parse(page)
    given = namespace(store)
    document.namespace.update(next(given))
    text = page.read_text()
    if "DB_URI" in text:  # a fresh schema of its own, as tests/conftest.py makes
        document.namespace["DB_URI"] = request.getfixturevalue("pg_uri")
    if "REDIS_URL" in text:  # a Redis server of the tests' own, emptied
        document.namespace["REDIS_URL"] = request.getfixturevalue("redis_url")
    if "```sql" in text:
        document.namespace["POSTGRES_SERVER"] = request.getfixturevalue("postgres_server")
    try:
        for example in document:
            output = io.StringIO()
            try:
                with contextlib.redirect_stdout(output):
                    example.evaluate()
            except SkipTest:
                continue
            except Exception as error:
                raise AssertionError(f"{page.name}, line {example.line}: {error}") from error
            document.namespace["PRINTED"] = output.getvalue().strip()
    finally:
        next(given, None)
