"""SQLite files opened as they are: a path is a path, and looking changes nothing.

The file is always opened through a `file:` URI built from its absolute path
(`Path.as_uri` percent-quotes `#`, `?`, `%`, spaces and non-ASCII), so no
character of a path is ever read as URI syntax. A look (`mode=ro`) cannot
write a byte; a repair (`mode=rw`) never creates the file.

LangGraph's SQLite savers run `setup()` on first use, which switches the file
to WAL and creates missing tables. Savers opened here are marked set up once
the file's tables are known, so neither a look nor a repair changes the
file's schema or journal mode: a repair only adds checkpoint rows. A file
without the `writes` table reads as a store with no pending writes: an empty
stand-in lives in the connection's own memory (`temp` schema), never in the file.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Mode = Literal["ro", "rw", "rwc"]

WRITES_STAND_IN = (
    "PRAGMA temp_store = MEMORY",
    """CREATE TEMP TABLE IF NOT EXISTS writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_path TEXT NOT NULL DEFAULT '',
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    )""",
)


class SqliteFileError(Exception):
    """The file cannot be used as a checkpoint store; the message is one line."""


@dataclass(frozen=True)
class FileTables:
    """What the file holds, read without writing to it."""

    names: frozenset[str]
    writes_columns: frozenset[str]


def file_uri(path: str, mode: Mode) -> str:
    """A `file:` URI naming exactly `path`, whatever characters it holds."""
    return f"{Path(path).absolute().as_uri()}?mode={mode}"


def shown(path: str) -> str:
    return path if len(path) <= 80 else f"{path[:60]}...{path[-16:]}"


def read_tables(path: str, create: bool = False) -> FileTables | None:
    """The file's tables, through a read-only connection; None for a file still to
    create. A missing file, one that is not a SQLite database or one without
    `checkpoints` is a `SqliteFileError`, unless `create`."""
    if not Path(path).exists():
        if create:
            return None
        raise SqliteFileError(f"no such SQLite file: {shown(path)}")
    try:
        with contextlib.closing(sqlite3.connect(file_uri(path, "ro"), uri=True)) as conn:
            names = frozenset(row[0] for row in conn.execute("SELECT name FROM sqlite_master"))
            columns = conn.execute("SELECT name FROM pragma_table_info('writes')").fetchall()
    except sqlite3.DatabaseError as error:
        raise SqliteFileError(f"{shown(path)} is not a SQLite database ({error})") from None
    if "checkpoints" not in names and not create:
        raise SqliteFileError(f"{shown(path)} has no LangGraph checkpoint tables")
    return FileTables(names, frozenset(row[0] for row in columns))


def mark_set_up(saver: Any, tables: FileTables) -> None:
    """Tell a SqliteSaver its file is ready, so its lazy `setup()` never runs."""
    if hasattr(type(saver), "_has_task_path") and "writes" in tables.names:
        saver._has_task_path = "task_path" in tables.writes_columns
    saver.is_setup = True


def ready_saver(saver: Any, tables: FileTables) -> None:
    """`mark_set_up`, after giving a file without `writes` its in-memory stand-in."""
    if "writes" not in tables.names:
        for statement in WRITES_STAND_IN:
            saver.conn.execute(statement)
    mark_set_up(saver, tables)


async def aready_saver(saver: Any, tables: FileTables) -> None:
    """The async twin of `ready_saver` (an aiosqlite connection)."""
    if "writes" not in tables.names:
        for statement in WRITES_STAND_IN:
            await saver.conn.execute(statement)
    mark_set_up(saver, tables)
