"""Threads lost to their bytes, as the command finds them (`docs/how-to/unreadable-threads.md`): a
type whose module is gone, a head that does not decode, text holding U+0000 in a pending write
on PostgreSQL. Real graphs write them on real SQLite and PostgreSQL stores; the real
command reads them in a child process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_runs import last_json, postgres_rows, run_cli, sqlite_rows
from tests.support.integrity_threads import (
    application_saver,
    brick_with_nul,
    forget_module,
    nul_graph,
    scan_json,
    shop_module,
    store_order,
    thread_entry,
    truncate_postgres_head,
    truncate_sqlite_head,
)
from tests.support.seeding import config

KINDS = ["sqlite", "postgres"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_type_whose_module_is_gone_is_lost(kind: str, tmp_path: Path, pg_uri: str) -> None:
    shop = shop_module(tmp_path / "app")
    with application_saver(kind, tmp_path, pg_uri) as (target, saver):
        store_order(saver, "order-1", shop)
        nul_graph(saver, text="fine").invoke({"text": "new"}, config("healthy"))
    type_name = f"{shop.__name__}:Order"
    present = scan_json(target, PYTHONPATH=str(tmp_path / "app"))
    assert "findings" not in present
    assert thread_entry(present, "order-1")["outcome"] == "refused_type"
    forget_module(shop)

    report = scan_json(target)
    entry = thread_entry(report, "order-1")
    assert entry["outcome"] == "refused_type"
    assert entry["findings"] == [
        {"code": "lost_type", "channel": "order", "task_id": None, "type": type_name, "error": None}
    ]
    assert report["findings"] == {"lost_type": 1}
    assert report["threads_scanned"] == 2 and report["errors"] == []
    allowed = scan_json(target, "--allow-type", type_name)
    assert thread_entry(allowed, "order-1")["findings"][0]["code"] == "lost_type"

    listed = run_cli("scan", target, "--min-idle", "0", "--list")
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    assert line.split("\t")[0] == "order-1"
    assert line.split("\t")[3] == "lost_type,refused_type"

    shown = run_cli("show", target, "--thread", "order-1")
    assert shown.returncode == 0, shown.stderr
    assert f"lost_type in channel 'order': {type_name}" in shown.stdout
    shown_json = last_json(run_cli("show", target, "--thread", "order-1", "--json").stdout)
    assert shown_json["findings"][0]["type"] == type_name


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_head_is_a_finding_and_the_run_goes_on(
    kind: str, tmp_path: Path, pg_uri: str
) -> None:
    with application_saver(kind, tmp_path, pg_uri) as (target, saver):
        for thread_id in ("cut", "whole"):
            store_order(saver, thread_id, shop_module(tmp_path / thread_id))
    if kind == "sqlite":
        truncate_sqlite_head(tmp_path / "threads.sqlite", "cut")
        channel, where = "", "the checkpoint"
    else:
        truncate_postgres_head(pg_uri, "cut", "order")
        channel, where = "order", "channel 'order'"
    report = scan_json(target)
    entry = thread_entry(report, "cut")
    assert entry["outcome"] == "unreadable"
    (finding,) = entry["findings"]
    assert finding["code"] == "undecodable" and finding["channel"] == channel
    assert finding["error"]
    assert report["errors"] == [] and report["threads_scanned"] == 2
    assert report["skipped"]["unreadable"] == 1
    assert report["findings"]["undecodable"] == 1

    shown = run_cli("show", target, "--thread", "cut")
    assert shown.returncode == 0, shown.stderr
    assert f"undecodable in {where}" in shown.stdout
    assert "do not decode" in shown.stdout


def test_nul_text_in_a_pending_write_is_found_on_postgres(pg_uri: str, tmp_path: Path) -> None:
    with application_saver("postgres", tmp_path, pg_uri) as (target, saver):
        brick_with_nul(saver, "nul")
        nul_graph(saver, text="plain").invoke({"text": "new"}, config("plain"))
    report = scan_json(target)
    (finding,) = thread_entry(report, "nul")["findings"]
    assert finding["code"] == "nul_text" and finding["channel"] == "text"
    assert finding["task_id"]
    assert report["findings"] == {"nul_text": 1}
    assert [t["thread_id"] for t in report["threads"]] == ["nul"]


def test_nul_text_is_harmless_on_sqlite(tmp_path: Path, pg_uri: str) -> None:
    with application_saver("sqlite", tmp_path, pg_uri) as (target, saver):
        nul_graph(saver).invoke({"text": "start"}, config("nul"))
    assert "findings" not in scan_json(target)


def test_nothing_a_stored_name_says_is_run(tmp_path: Path, pg_uri: str) -> None:
    """A module on the path that writes a file when imported: the command finds it
    (`refused`, not lost) and never imports it."""
    folder = tmp_path / "app"
    folder.mkdir()
    marker = tmp_path / "imported"
    (folder / "tripwire_models.py").write_text(
        "from dataclasses import dataclass\n"
        f"open({str(marker)!r}, 'w').close()\n\n\n"
        "@dataclass\nclass Order:\n    sku: str\n    qty: int\n"
    )
    import importlib
    import sys

    sys.path.insert(0, str(folder))
    try:
        tripwire = importlib.import_module("tripwire_models")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("tripwire_models", None)
    marker.unlink()
    for kind in KINDS:
        with application_saver(kind, tmp_path, pg_uri) as (target, saver):
            store_order(saver, f"order-{kind}", tripwire)
        env = {"PYTHONPATH": str(folder)}
        report = scan_json(target, **env)
        assert "findings" not in report
        assert report["refused_types"] == ["tripwire_models.Order"]
        assert run_cli("show", target, "--thread", f"order-{kind}", **env).returncode == 0
        listed = types_json(target, **env)
        assert {"type": "tripwire_models:Order", "threads": 1, "status": "refused"} in listed[
            "types"
        ]
        assert not marker.exists()


def types_json(target: str, *more: str, **env: str) -> dict[str, Any]:
    done = run_cli("types", target, "--json", *more, **env)
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


@pytest.mark.parametrize("kind", KINDS)
def test_types_lists_every_stored_type_and_the_list_strict_msgpack_needs(
    kind: str, tmp_path: Path, pg_uri: str
) -> None:
    kept, gone = shop_module(tmp_path / "kept"), shop_module(tmp_path / "gone")
    with application_saver(kind, tmp_path, pg_uri) as (target, saver):
        for n in range(3):
            store_order(saver, f"kept-{n}", kept)
        store_order(saver, "gone-0", gone)
        nul_graph(saver, text="plain").invoke({"text": "new"}, config("plain"))
        store_order(saver, "kept-0", gone)  # the head now holds the other type only
    forget_module(gone)
    env = {"PYTHONPATH": str(tmp_path / "kept")}
    kept_type, gone_type = f"{kept.__name__}:Order", f"{gone.__name__}:Order"
    stored_before = every_row(kind, tmp_path, pg_uri)

    heads = types_json(target, **env)
    assert set(heads) == {"types", "allowed_msgpack_modules"}
    by_type = {entry["type"]: entry for entry in heads["types"]}
    assert by_type[kept_type] == {"type": kept_type, "threads": 2, "status": "refused"}
    assert by_type[gone_type] == {"type": gone_type, "threads": 2, "status": "lost"}
    expected = sorted([[kept.__name__, "Order"], [gone.__name__, "Order"]])
    assert heads["allowed_msgpack_modules"] == expected  # the lost one too: it may be elsewhere

    history = types_json(target, "--all-checkpoints", **env)
    assert {e["type"]: e["threads"] for e in history["types"]}[kept_type] == 3

    allowed = types_json(target, "--allow-type", kept_type, **env)
    assert {e["type"]: e["status"] for e in allowed["types"]}[kept_type] == "allowed"

    printed = run_cli("types", target, **env)
    assert printed.returncode == 0, printed.stderr
    assert f"('{kept.__name__}', 'Order')" in printed.stdout.splitlines()[-1]
    assert f"('{gone.__name__}', 'Order')" in printed.stdout.splitlines()[-1]
    assert f"not found here (lost; `scan` names the threads): {gone_type}" in printed.stdout
    assert "PYTHONPATH" in printed.stdout
    assert "6 threads looked at" not in printed.stdout and "5 threads looked at" in printed.stdout
    assert gone_type in printed.stdout
    assert every_row(kind, tmp_path, pg_uri) == stored_before  # types wrote nothing


def every_row(kind: str, tmp_path: Path, pg_uri: str) -> object:
    if kind == "sqlite":
        return sqlite_rows(tmp_path / "threads.sqlite")
    return postgres_rows(pg_uri)


def test_types_needs_stored_bytes(tmp_path: Path) -> None:
    """A saver known only through its API (an in-memory one here) shows no bytes."""
    factory = tmp_path / "memory_factory.py"
    factory.write_text(
        "from langgraph.checkpoint.memory import InMemorySaver\nsaver = InMemorySaver()\n"
    )
    done = run_cli("types", "memory_factory:saver", PYTHONPATH=str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "shows no stored bytes" in done.stderr
