"""Every user mistake is one line on stderr, exit 2, no traceback, and nothing written:
run as an operator would, in a child process, on a real SQLite file and a real
PostgreSQL store."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.cli_child import BLOCK_ENV
from tests.support.cli_runs import postgres_rows, run_cli, sqlite_rows
from tests.support.factories import SQLITE_ENV
from tests.support.seeding import brick
from tests.support.stores import Store

SQLITE, POSTGRES = "sqlite", "postgres"


@dataclass(frozen=True)
class Mistake:
    """One command that must fail cleanly; `{db}` is the seeded store, `{tmp}` a folder."""

    argv: tuple[str, ...]
    message: str
    store: str = SQLITE
    env: dict[str, str] = field(default_factory=dict)
    situation: str = ""
    """What the test sets up first: "locked" table, "read_only" role, "syntax_error" module."""


MISTAKES = {
    "sqlite path too long": Mistake(
        ("scan", "sqlite:///{tmp}/" + "x" * 300 + ".sqlite"), "cannot open SQLite file"
    ),
    "module raises on import": Mistake(
        ("scan", "tests.support.raises_on_import:saver"), "DATABASE_URL is not set"
    ),
    "module has a syntax error": Mistake(
        ("scan", "broken_settings:saver"), "SyntaxError", situation="syntax_error"
    ),
    "factory raises SystemExit": Mistake(("scan", "sys:exit"), "calling sys:exit() failed"),
    "async factory raises SystemExit": Mistake(
        ("repair", "tests.support.factories:exits_when_awaited"), "SystemExit: no saver configured"
    ),
    "module exits on import": Mistake(
        ("scan", "exits_on_import:saver"), "SystemExit: 3", situation="exits_on_import"
    ),
    "factory raises": Mistake(("repair", "tests.support.factories:raises"), "secrets vault"),
    "factory needs arguments": Mistake(
        ("repair", "tests.support.factories:needs_arguments"),
        "calling tests.support.factories:needs_arguments()",
    ),
    "file path as module": Mistake(("repair", "./factories.py:saver"), "is a file path"),
    "saver implements nothing": Mistake(
        ("scan", "tests.support.factories:nothing_implemented"), "implements neither"
    ),
    "list(None) raises": Mistake(
        ("scan", "tests.support.factories:no_full_listing"), "listing every thread is not supported"
    ),
    "min-idle overflows": Mistake(("repair", "{db}", "--min-idle", "99999999999d"), "too long"),
    "min-idle too long for a date": Mistake(
        ("repair", "{db}", "--min-idle", "999999999d"), "too long"
    ),
    "strict=maybe": Mistake(("repair", "{db}", "--policy", "strict=maybe"), "not a boolean"),
    "media=shrink": Mistake(("repair", "{db}", "--policy", "media=shrink"), "RepairPolicy.media"),
    "max_result_chars=lots": Mistake(
        ("repair", "{db}", "--policy", "max_result_chars=lots"), "not a number of characters"
    ),
    "max_result_chars too small": Mistake(
        ("repair", "{db}", "--policy", "max_result_chars=50"), "must be at least 200"
    ),
    "model_profile not JSON": Mistake(
        ("scan", "{db}", "--policy", "model_profile=image_inputs=false"), "not a JSON object"
    ),
    "downscale without Pillow": Mistake(
        ("repair", "{db}", "--policy", "media=downscale"), "needs Pillow", situation="no_pillow"
    ),
    "bad placeholder": Mistake(
        ("repair", "{db}", "--policy", "placeholder={{nope}}"), "not a valid template"
    ),
    "rate tiny": Mistake(("repair", "{db}", "--max-writes-per-second", "1e-400"), "rate"),
    "rate negative": Mistake(("repair", "{db}", "--max-writes-per-second=-1"), "rate"),
    "rate nan": Mistake(("repair", "{db}", "--max-writes-per-second", "nan"), "rate"),
    "rate inf": Mistake(("repair", "{db}", "--max-writes-per-second", "inf"), "rate"),
    "rate zero": Mistake(("repair", "{db}", "--max-writes-per-second", "0"), "rate"),
    "undo unknown run on sqlite": Mistake(
        ("undo", "{db}", "--run", "run-nope"), "no repair recorded"
    ),
    "undo unknown run on postgres": Mistake(
        ("undo", "{db}", "--run", "run-nope"), "no repair recorded", store=POSTGRES
    ),
    "postgres extra missing": Mistake(
        ("repair", "{db}"),
        "pip install 'langgraph-checkpoint-repair[postgres]'",
        store=POSTGRES,
        env={BLOCK_ENV: "psycopg,psycopg_pool,langgraph.checkpoint.postgres"},
    ),
    "postgres saver missing": Mistake(
        ("repair", "{db}"),
        "postgres extra",
        store=POSTGRES,
        env={BLOCK_ENV: "langgraph.checkpoint.postgres"},
    ),
    "sqlite extra missing": Mistake(
        ("scan", "{db}"), "sqlite extra", env={BLOCK_ENV: "langgraph.checkpoint.sqlite"}
    ),
    "table locked by another session": Mistake(
        ("scan", "{db}"), "locked by another session", store=POSTGRES, situation="locked"
    ),
    "table locked during a repair": Mistake(
        ("repair", "{db}"), "locked by another session", store=POSTGRES, situation="locked"
    ),
    "read-only role": Mistake(
        ("repair", "{db}"), "langgraph-repair migrate", store=POSTGRES, situation="read_only"
    ),
}


async def seeded_sqlite(path: Path) -> None:
    with SqliteSaver.from_conn_string(str(path)) as saver:
        for n in range(2):
            await brick(Store(saver, is_async=False), f"bricked-{n}")


async def seeded_postgres(uri: str) -> None:
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        for n in range(2):
            await brick(Store(saver, is_async=False), f"bricked-{n}")


@contextlib.contextmanager
def situation(name: str, uri: str, tmp: Path) -> Iterator[str]:
    """Set up what the mistake needs; yield the URI the command should use."""
    if name == "locked":
        with psycopg.connect(uri) as holder:
            holder.execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
            yield uri
    elif name == "read_only":
        with read_only_role(uri) as read_only_uri:
            yield read_only_uri
    else:
        if name == "syntax_error":
            (tmp / "broken_settings.py").write_text("def saver(:\n    pass\n")
        if name == "no_pillow":  # shadows the installed Pillow for the child only
            (tmp / "PIL").mkdir()
            (tmp / "PIL" / "__init__.py").write_text("raise ImportError('No module named PIL')\n")
        if name == "exits_on_import":
            (tmp / "exits_on_import.py").write_text("import sys\n\nsys.exit(3)\n")
        yield uri


def left_in(folder: Path) -> list[Path]:
    """What the folder holds, Python's bytecode cache of a module imported from it aside
    (the interpreter writes it, not the command)."""
    return sorted(path for path in folder.iterdir() if path.name != "__pycache__")


@contextlib.contextmanager
def read_only_role(uri: str) -> Iterator[str]:
    """A real login role allowed to read the test's schema and nothing more."""
    role = f"reader_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(uri, autocommit=True) as admin:
        row = admin.execute("SELECT current_schema()").fetchone()
        assert row is not None
        schema = row[0]
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        try:
            yield uri.replace("postgres@", f"{role}@", 1)
        finally:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")


def written(store: str, where: Any) -> Any:
    return sqlite_rows(where) if store == SQLITE else postgres_rows(where)


@pytest.mark.parametrize("name", list(MISTAKES))
async def test_every_mistake_is_one_line_exit_2_and_writes_nothing(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    mistake = MISTAKES[name]
    if mistake.store == SQLITE:
        where: Any = tmp_path / "threads.sqlite"
        await seeded_sqlite(where)
        uri = f"sqlite:///{where}"
    else:
        where = uri = request.getfixturevalue("pg_uri")
        await seeded_postgres(uri)
    before = written(mistake.store, where)
    with situation(mistake.situation, uri, tmp_path) as target:
        files = left_in(tmp_path)
        argv = [arg.format(db=target, tmp=tmp_path) for arg in mistake.argv]
        env = {**mistake.env, "PYTHONPATH": str(tmp_path), SQLITE_ENV: str(where)}
        done = run_cli(*argv, **env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("langgraph-repair: error: ")
    assert mistake.message in lines[0]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert left_in(tmp_path) == files
    assert written(mistake.store, where) == before
