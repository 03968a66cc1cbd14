"""Each command imports what its own work needs, in a real child process: `--help` and
`--version` nothing of LangGraph or LangChain, a SQLite look the SQLite saver and not
psycopg, a PostgreSQL look psycopg and not aiosqlite, and no command the Agent Server,
OpenTelemetry or a provider's converters unless asked."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.agents import chat_graph
from tests.support.cli_child import MODULES_ENV
from tests.support.cli_runs import run_cli
from tests.support.seeding import HAND_BROKEN, config

ASKED_ONLY = (
    "langgraph_api",
    "langgraph_runtime_inmem",
    "opentelemetry",
    "langchain_openai",
    "langchain_anthropic",
    "langchain_mistralai",
    "langchain_aws",
    "PIL",
)
"""What no command loads unless the operator asks for it."""


def seed_chats(saver: Any) -> None:
    """Threads of a one-node chat graph, two of them broken by hand. Nothing in them
    needs LangGraph's graph runtime to be read back (a stored `Send` would: LangGraph's
    serializer imports it, and LangSmith with it, to rebuild one)."""
    chat = chat_graph(saver)
    chat.invoke({"messages": []}, config("clean"))
    for kind, history in HAND_BROKEN.items():
        chat.update_state(config(kind), {"messages": history}, as_node="chat")


@pytest.fixture
def sqlite_chats(tmp_path: Path) -> str:
    path = tmp_path / "chats.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        seed_chats(saver)
    return f"sqlite:///{path}"


@pytest.fixture
def postgres_chats(pg_uri: str) -> str:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        seed_chats(saver)
    return pg_uri


def imported_by(tmp_path: Path, *argv: str, **env: str) -> tuple[int, set[str]]:
    """The exit code of `langgraph-repair ARGV` and the modules it imported."""
    listing = tmp_path / "modules.txt"
    done = run_cli(*argv, **{MODULES_ENV: str(listing), **env})
    assert listing.exists(), done.stderr
    return done.returncode, set(listing.read_text().split())


def top_level(modules: set[str]) -> set[str]:
    """The packages imported, the standard library's and the tests' own left out."""
    names = {name.split(".")[0] for name in modules}
    return {name for name in names if name not in sys.stdlib_module_names} - {
        "__main__",
        "tests",
        "_distutils_hack",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["scan", "--help"],
        ["repair", "--help"],
        ["undo", "-h"],
        ["prune", "--help"],
    ],
)
def test_help_and_version_import_nothing_but_the_package(tmp_path: Path, argv: list[str]) -> None:
    code, modules = imported_by(tmp_path, *argv)

    assert code == 0
    assert top_level(modules) == {"langgraph_checkpoint_repair"}
    assert not {name for name in modules if name.startswith("langgraph_checkpoint_repair.")} - {
        "langgraph_checkpoint_repair.cli",
        "langgraph_checkpoint_repair.cli.arguments",
        "langgraph_checkpoint_repair.cli.commands",
        "langgraph_checkpoint_repair.cli.exits",
        "langgraph_checkpoint_repair.cli.materialize",
        "langgraph_checkpoint_repair.cli.retention",
        "langgraph_checkpoint_repair.cli.rollback",
        "langgraph_checkpoint_repair.cli.values",
        "langgraph_checkpoint_repair.codes",
        "langgraph_checkpoint_repair.lazy_exports",
        "langgraph_checkpoint_repair.targets",
        "langgraph_checkpoint_repair.targets.errors",
        "langgraph_checkpoint_repair.targets.parse",
        "langgraph_checkpoint_repair.redact",
        "langgraph_checkpoint_repair.stores",
        "langgraph_checkpoint_repair.stores.opening_errors",
    }


def test_a_mistyped_option_imports_nothing_but_the_package(tmp_path: Path) -> None:
    code, modules = imported_by(tmp_path, "scan", "sqlite:///x.sqlite", "--min-idel", "5m")

    assert code == 2
    assert top_level(modules) == {"langgraph_checkpoint_repair"}


def test_a_sqlite_look_imports_the_sqlite_saver_and_not_psycopg(
    tmp_path: Path, sqlite_chats: str
) -> None:
    code, modules = imported_by(tmp_path, "scan", sqlite_chats, "--min-idle", "0", "--json")

    assert code == 0
    assert "langgraph.checkpoint.sqlite" in modules
    assert top_level(modules) & {"psycopg", "psycopg_pool", "rich", *ASKED_ONLY} == set()
    assert "langgraph.pregel" not in modules  # the graph runtime is not needed to look
    assert "langgraph_checkpoint_repair.stores.postgres" not in modules


@pytest.mark.parametrize(
    "argv",
    [["show", "--thread", "orphan"], ["types"], ["repair", "--dry-run", "--min-idle", "0"]],
    ids=lambda argv: argv[0],
)
def test_each_look_at_a_sqlite_file_leaves_postgres_alone(
    tmp_path: Path, sqlite_chats: str, argv: list[str]
) -> None:
    code, modules = imported_by(tmp_path, argv[0], sqlite_chats, *argv[1:], "--json")

    assert code == 0
    assert top_level(modules) & {"psycopg", "psycopg_pool", *ASKED_ONLY} == set()


def test_a_table_is_drawn_with_rich(tmp_path: Path, sqlite_chats: str) -> None:
    code, modules = imported_by(tmp_path, "scan", sqlite_chats, "--min-idle", "0")

    assert code == 0
    assert "rich" in top_level(modules)


def test_a_postgres_look_imports_psycopg_and_not_aiosqlite(
    tmp_path: Path, postgres_chats: str
) -> None:
    code, modules = imported_by(tmp_path, "scan", postgres_chats, "--min-idle", "0", "--json")

    assert code == 0
    assert "psycopg" in top_level(modules)
    assert "langgraph.pregel" not in modules
    assert top_level(modules) & {"aiosqlite", *ASKED_ONLY} == set()
    assert "langgraph.checkpoint.sqlite" not in modules


def test_a_postgres_migrate_leaves_sqlite_alone(tmp_path: Path, postgres_chats: str) -> None:
    code, modules = imported_by(tmp_path, "migrate", postgres_chats)

    assert code == 0
    assert top_level(modules) & {"aiosqlite", *ASKED_ONLY} == set()
    assert "langgraph.checkpoint.sqlite" not in modules


def test_opentelemetry_is_loaded_where_the_environment_asks_for_it(
    tmp_path: Path, sqlite_chats: str
) -> None:
    pytest.importorskip("opentelemetry")
    argv = ("scan", sqlite_chats, "--min-idle", "0", "--json")

    code, modules = imported_by(tmp_path, *argv, OTEL_METRICS_EXPORTER="none")

    assert code == 0
    assert "opentelemetry" in top_level(modules)
