"""Stored bytes never run code: a checkpoint naming `os.mkdir` in its messages is read
by every command of the real CLI, in a child process, on real SQLite and PostgreSQL
stores; the directory is never made, the type is named once, and the head is left
alone. A custom state type the operator trusts round-trips through a repair."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.batch import arepair_threads
from langgraph_checkpoint_repair.decoding.strict import StrictSerializer, refusals, refused_in
from langgraph_checkpoint_repair.targets import aopen_saver, open_saver
from tests.support.cli_runs import last_json, run_cli
from tests.support.custom_state import Plan, hostile
from tests.support.histories import ai, human
from tests.support.seeding import config

HOSTILE, PLAIN = "hostile", "plain"


def broken(*foreign: Any) -> list[BaseMessage]:
    """A history with a call left unanswered, then new input: a run would repair it;
    `foreign` values stored in the list too (LangGraph stores each as its own extension)."""
    return [human("a"), ai("a1", "c1"), *foreign, human("b")]


def plant(saver: BaseCheckpointSaver[Any], thread_id: str, values: dict[str, Any]) -> None:
    """One head holding `values`, written as LangGraph writes (its default serializer)."""
    checkpoint = empty_checkpoint()
    version = saver.get_next_version(None, None)
    checkpoint["channel_values"] = dict(values)
    checkpoint["channel_versions"] = {name: version for name in values}
    metadata: Any = {"source": "loop", "step": 1, "parents": {}}
    saver.put(config(thread_id), checkpoint, metadata, dict(checkpoint["channel_versions"]))


@contextmanager
def permissive(target: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """The application's own saver on the store: LangGraph's default serializer."""
    if target.startswith("sqlite:///"):
        conn = sqlite3.connect(target[len("sqlite:///") :], check_same_thread=False)
        try:
            saver: BaseCheckpointSaver[Any] = SqliteSaver(conn)
            saver.setup()  # type: ignore[attr-defined]
            yield saver
        finally:
            conn.close()
    else:
        with PostgresSaver.from_conn_string(target) as pg:
            pg.setup()
            yield pg


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.sqlite'}"
    uri: str = request.getfixturevalue("pg_uri")
    return uri


def heads(target: str) -> dict[str, int]:
    """How many checkpoints each thread holds (counted in SQL: nothing is loaded)."""
    query = "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
    if target.startswith("sqlite:///"):
        with closing(sqlite3.connect(target[len("sqlite:///") :])) as conn:
            return dict(conn.execute(query).fetchall())
    with psycopg.connect(target) as pg:
        return dict(pg.execute(query).fetchall())


COMMANDS = [
    ("scan", "--min-idle", "0", "--json"),
    ("scan", "--min-idle", "0", "--list"),
    ("repair", "--min-idle", "0", "--dry-run", "--json"),
    ("repair", "--min-idle", "0", "--json"),
    ("show", "--thread", HOSTILE, "--json"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_stored_bytes_never_run_code(target: str, tmp_path: Path, command: tuple[str, ...]) -> None:
    made = tmp_path / "made-by-stored-bytes"
    with permissive(target) as saver:
        plant(saver, HOSTILE, {"messages": broken(hostile(str(made)))})
        plant(saver, PLAIN, {"messages": broken()})
    before = heads(target)

    name, *flags = command
    done = run_cli(name, target, *flags)

    assert not made.exists(), "loading the store ran code named by its bytes"
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning: refused type os.mkdir") == 1, done.stderr
    assert "Traceback" not in done.stderr
    if "--json" in flags:
        assert last_json(done.stdout)["refused_types"] == ["os.mkdir"]
    if name in ("scan", "repair"):
        assert_hostile_head_left_alone(target, before, name, flags, done.stdout)


def assert_hostile_head_left_alone(
    target: str, before: dict[str, int], name: str, flags: list[str], stdout: str
) -> None:
    after = heads(target)
    assert after[HOSTILE] == before[HOSTILE], "a head holding a refused type was written on"
    if "--list" in flags:
        listed = [line.split("\t")[0] for line in stdout.splitlines()]
        assert sorted(listed) == sorted([HOSTILE, PLAIN])  # in the order the run met them
        return
    report = last_json(stdout)
    assert report["skipped"] == {"refused_type": 1}
    outcomes = {t["thread_id"]: t["outcome"] for t in report.get("threads", [])}
    if name == "scan":
        assert outcomes == {HOSTILE: "refused_type", PLAIN: "would_repair"}
    real = name == "repair" and "--dry-run" not in flags
    assert after[PLAIN] == before[PLAIN] + real  # the clean store's other head is repaired


def test_a_refused_type_in_another_channel_also_keeps_the_head(target: str) -> None:
    """The message blob looks clean of anything foreign; the other channel does not.
    A SQLite checkpoint stores every channel inline, so it is never rewritten."""
    with permissive(target) as saver:
        plant(saver, HOSTILE, {"messages": broken(), "plan": Plan(steps=["a", "b"])})
    before = heads(target)
    done = run_cli("repair", target, "--min-idle", "0", "--json")
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert report["refused_types"] == ["tests.support.custom_state.Plan"]
    assert report["skipped"] == {"refused_type": 1}
    assert report["threads_needing_repair"] == 1
    assert heads(target) == before


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_trusted_custom_type_round_trips_through_a_repair(target: str, how: str) -> None:
    plan = Plan(steps=["search", "answer"], done=1)
    with permissive(target) as saver:
        plant(saver, PLAIN, {"messages": broken(), "plan": plan})
    trust = "tests.support.custom_state:Plan"
    if how == "flag":
        done = run_cli("repair", target, "--min-idle", "0", "--json", "--allow-type", trust)
    else:
        env = {"LANGGRAPH_REPAIR_ALLOW_TYPES": f"datetime:tzinfo, {trust}"}
        done = run_cli("repair", target, "--min-idle", "0", "--json", **env)
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert (report["threads_repaired"], report["refused_types"]) == (1, [])
    with permissive(target) as saver:
        head = saver.get_tuple(config(PLAIN))
        assert head is not None and head.metadata.get("source") == "update"
        assert head.checkpoint["channel_values"]["plan"] == plan


@pytest.mark.parametrize("bad", ["os.mkdir", "os:", ":mkdir", "os:mk dir"])
def test_a_malformed_allowed_type_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    done = run_cli("scan", f"sqlite:///{tmp_path / 'none.sqlite'}", "--allow-type", bad)
    assert done.returncode == 2
    assert done.stderr.startswith("langgraph-repair: error: not a type:"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_strict_serializer_builds_langgraphs_types_and_names_the_rest(
    tmp_path: Path,
) -> None:
    """On any supported LangGraph: messages and datetimes built, a foreign type plain."""
    from datetime import datetime, timezone

    made = tmp_path / "made"
    value = {"messages": broken(hostile(str(made))), "at": datetime.now(timezone.utc)}
    stored = StrictSerializer().dumps_typed(value)
    assert refused_in(stored[1], StrictSerializer().allowed) == {"os.mkdir"}
    serde = StrictSerializer()
    with refusals() as refused:
        loaded = serde.loads_typed(stored)
    assert refused == serde.refused == {"os.mkdir"}
    assert not made.exists()
    assert loaded["at"] == value["at"]
    assert [type(m) for m in loaded["messages"]] == [HumanMessage, AIMessage, dict, HumanMessage]
    assert loaded["messages"][2] == {"path": str(made)}


def test_undo_leaves_a_thread_whose_read_refused_a_type(target: str) -> None:
    """Repaired trusting a custom type, undone without trusting it: restoring would
    write the custom value back as plain data, so the thread is left alone, and the
    undo exits 1 saying what would let it restore the thread."""
    with permissive(target) as saver:
        plant(saver, PLAIN, {"messages": broken(), "plan": Plan(steps=["a"])})
    trust = ("--allow-type", "tests.support.custom_state:Plan")
    repaired = run_cli("repair", target, "--min-idle", "0", "--json", *trust)
    run_id = last_json(repaired.stdout)["run_id"]
    before = heads(target)
    done = run_cli("undo", target, "--run", run_id, "--json")
    assert done.returncode == 1, done.stderr
    assert "1 thread(s) not restored: 1 refused_type" in done.stderr
    report = last_json(done.stdout)
    assert (report["threads_restored"], report["skipped"][0]["reason"]) == (0, "refused_type")
    assert "warning: refused type tests.support.custom_state.Plan" in done.stderr
    assert heads(target) == before
    trusted = run_cli("undo", target, "--run", run_id, "--json", *trust)
    assert last_json(trusted.stdout)["threads_restored"] == 1


def test_a_saver_from_module_attr_keeps_its_owners_serializer(tmp_path: Path) -> None:
    """The factory's saver (LangGraph's default serializer) builds the custom type: the
    head is repaired, nothing refused."""
    path = tmp_path / "threads.sqlite"
    with permissive(f"sqlite:///{path}") as saver:
        plant(saver, PLAIN, {"messages": broken(), "plan": Plan(steps=["a"])})
    env = {"REPAIR_TEST_SQLITE": str(path)}
    done = run_cli(
        "repair", "tests.support.factories:sqlite_saver", "--min-idle", "0", "--json", **env
    )
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert (report["threads_repaired"], report["refused_types"]) == (1, [])


def test_open_saver_without_a_serializer_reads_as_the_application_does(target: str) -> None:
    """The library's opening (the Agent Server drop-in's) keeps LangGraph's default."""
    with permissive(target) as saver:
        plant(saver, PLAIN, {"messages": broken(), "plan": Plan(steps=["a"])})
    with open_saver(target) as opened:
        head = opened.get_tuple(config(PLAIN))
    assert head is not None and head.checkpoint["channel_values"]["plan"] == Plan(steps=["a"])


async def test_the_async_run_leaves_a_refused_head_alone_too(tmp_path: Path) -> None:
    """The refusals of one head's read are told apart in the async run's tasks as in the
    sync run's threads: the hostile head is skipped, the other repaired."""
    made = tmp_path / "made"
    target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    with permissive(target) as saver:
        plant(saver, HOSTILE, {"messages": broken(hostile(str(made)))})
        for n in range(3):
            plant(saver, f"{PLAIN}-{n}", {"messages": broken()})
    serde = StrictSerializer()
    async with aopen_saver(target, serde=serde) as opened:
        report = await arepair_threads(opened, min_idle=0, concurrency=4)
    assert not made.exists()
    assert (report.threads_repaired, dict(report.skipped)) == (3, {"refused_type": 1})
    assert report.to_json()["refused_types"] == ["os.mkdir"] == sorted(serde.refused)


def test_a_blob_is_decoded_once_and_its_refusals_still_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refusals are noted by the one decode that builds the value: the blob is not read
    a first time to name them (where LangGraph reports its refusals, or the hook is
    ours); what is refused is the same, and is still never built."""
    import ormsgpack

    made = tmp_path / "made"
    stored = StrictSerializer().dumps_typed({"messages": broken(hostile(str(made)))})
    decodes = 0
    real_unpackb = ormsgpack.unpackb

    def counted(blob: Any, *args: Any, **kwargs: Any) -> Any:  # the module is LangGraph's too
        nonlocal decodes
        decodes += blob == stored[1]
        return real_unpackb(blob, *args, **kwargs)

    monkeypatch.setattr(ormsgpack, "unpackb", counted)
    serde = StrictSerializer()
    if serde._first_read:
        pytest.skip("this LangGraph neither reports refusals nor lets us decode")
    with refusals() as refused:
        serde.loads_typed(stored)
    assert refused == {"os.mkdir"}
    assert not made.exists()
    assert decodes == 1
