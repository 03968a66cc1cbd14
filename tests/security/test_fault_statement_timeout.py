"""A role whose `statement_timeout` is too low for a page of heads: the command says so
in one line naming the setting (exit 2, nothing written), never a traceback, whether
the store is a saver the application opened (a `module:attr` factory) or a URI the
command opens: its sessions cap their time limits but keep an operator's lower ones.
Whichever statement runs past the limit first (a session's set-up, a check, a page),
the line is the same: the outcome does not depend on how busy the machine is."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from langgraph_checkpoint_repair.stores.postgres.base import GENTLE_SQL
from langgraph_checkpoint_repair.targets import open_saver
from tests.support.cli_runs import repairs_per_thread_postgres, run_cli
from tests.support.factories import POSTGRES_ENV
from tests.support.many_threads import multiply
from tests.support.postgres_threads import BROKEN, put_chain, saver_on


@pytest.mark.parametrize("opened", ["factory", "uri"])
def test_a_statement_timeout_too_low_is_named_in_one_line(hurried_role: str, opened: str) -> None:
    unhurried = hurried_role + quote(" -c statement_timeout=0")  # to seed the store
    with saver_on(unhurried) as saver:
        put_chain(saver, "bricked", "", BROKEN)
    multiply(unhurried, ["bricked"], 2000)
    target = "tests.support.factories:postgres_saver" if opened == "factory" else hurried_role
    for command in ("scan", "repair"):  # a scan reads a page first; a repair checks first
        done = run_cli(command, target, "--min-idle", "0", **{POSTGRES_ENV: hurried_role})
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.splitlines()
        # The server's own text: on a limit this short, PostgreSQL may report a timeout
        # that fires as a statement ends as a cancel "due to user request".
        assert line.startswith(
            "langgraph-repair: error: a statement ran too long (statement_timeout): "
            "canceling statement due to "
        ), line
    assert repairs_per_thread_postgres(unhurried) == {}


TIME_LIMITS = (
    "SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS run"
)


@pytest.mark.parametrize(
    ("options", "session", "write"),
    [
        ("", ("2s", "1min"), ("2s", "30s")),
        ("-c statement_timeout=5s", ("2s", "5s"), ("2s", "5s")),
        ("-c lock_timeout=100ms -c statement_timeout=0", ("100ms", "1min"), ("100ms", "30s")),
        ("-c statement_timeout=10min", ("2s", "1min"), ("2s", "30s")),
    ],
)
def test_the_command_caps_its_time_limits_and_keeps_lower_ones(
    pg_uri: str, options: str, session: tuple[str, str], write: tuple[str, str]
) -> None:
    uri = pg_uri + quote(f" {options}") if options else pg_uri
    with saver_on(pg_uri):
        pass  # LangGraph's tables
    with open_saver(uri, gentle=True) as saver, saver.conn.connection() as conn:  # type: ignore[attr-defined]
        assert conn.execute(TIME_LIMITS).fetchone() == {"lock": session[0], "run": session[1]}
        with conn.transaction():
            conn.execute(GENTLE_SQL)
            assert conn.execute(TIME_LIMITS).fetchone() == {"lock": write[0], "run": write[1]}
