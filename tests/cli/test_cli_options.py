"""Options that used to be silently wrong: --channel naming nothing, --limit hiding broken
threads; and what --version and --help tell an operator."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.cli import main
from tests.cli.test_cli import last_json, run
from tests.support.seeding import Seeded, seed
from tests.support.stores import Store


@pytest.fixture(params=["sqlite", "postgres"])
async def target(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Seeded]:
    if request.param == "sqlite":
        path = tmp_path / "threads.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            return f"sqlite:///{path}", await seed(Store(saver, is_async=False), bricked=3)
    uri = request.getfixturevalue("pg_uri")
    with PostgresSaver.from_conn_string(uri) as pg:
        pg.setup()
        return uri, await seed(Store(pg, is_async=False), bricked=3)


def test_a_channel_found_in_no_thread_is_reported(
    target: tuple[str, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    uri, _ = target
    code, output = run("scan", uri, "--min-idle", "0", "--channel", "nope", "--json")
    assert code == 0
    assert last_json(output)["channels_not_found"] == ["nope"]
    err = capsys.readouterr().err
    assert err == "langgraph-repair: warning: no scanned thread has a channel named 'nope'\n"

    code, output = run("scan", uri, "--min-idle", "0", "--channel", "nope", "--channel", "messages")
    assert code == 0
    assert output.splitlines()[-1].split() == ["channels", "not", "found", "nope"]
    code, output = run("scan", uri, "--min-idle", "0", "--json")
    assert "channels_not_found" not in last_json(output)
    assert capsys.readouterr().err.count("warning") == 1


def test_limit_repairs_at_most_n_and_still_counts_every_broken_thread(
    target: tuple[str, Seeded],
) -> None:
    uri, seeded = target
    code, output = run("repair", uri, "--min-idle", "0", "--limit", "2", "--json")
    report = last_json(output)
    assert code == 0
    assert report["threads_needing_repair"] == len(seeded.broken)
    assert report["threads_repaired"] == 2
    assert report["skipped"] == {"in_flight": 1, "limit": len(seeded.broken) - 2}
    rest = last_json(run("repair", uri, "--min-idle", "0", "--json")[1])
    assert rest["threads_repaired"] == len(seeded.broken) - 2


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == "langgraph-repair 0.1.0\n"


@pytest.mark.parametrize("command", ["scan", "repair"])
def test_help_documents_every_option_and_the_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in ("--thread", "--min-idle", "--shard", "--concurrency", "--limit", "--policy"):
        assert option in text
    for option in ("--channel", "--max-writes-per-second", "--json", "--verbose", "--allow-type"):
        assert option in text
    assert "--type-moved" in text and "--graph SPEC" in text and "--node-renamed OLD=NEW" in text
    assert text.count("(repeatable") == 7
    assert "LANGGRAPH_REPAIR_TARGET" in text and "LANGGRAPH_REPAIR_ALLOW_TYPES" in text
    assert "threads repaired at once (default 4)" in text
    assert "at most RATE repair writes per second" in text
    for code in ("0 success", "1 some thread failed", "2 usage", "130 stopped by SIGINT"):
        assert code in text
    assert "143 stopped by SIGTERM" in text
    assert f"example: langgraph-repair {command} " in text
