"""`--type-moved`: a lost type renamed in the stored bytes to the class it moved to, by
the real command on real SQLite and PostgreSQL stores. Nothing is built: the new bytes
are the old ones with the names changed, and the application then loads its new class."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_checkpoint_repair.decoding.rename import moved_from, rename_types
from tests.support.cli_runs import last_json, run_cli
from tests.support.integrity_threads import (
    application_saver,
    scan_json,
    stored_channel,
    thread_entry,
)
from tests.support.seeding import config
from tests.support.shop import ORDER, order_graph, shop_on_path

KINDS = ["sqlite", "postgres"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_moved_type_is_renamed_in_the_stored_bytes(
    kind: str, tmp_path: Path, pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with shop_on_path(tmp_path, monkeypatch) as shop:
        with application_saver(kind, tmp_path, pg_uri) as (target, saver):
            order_graph(saver, shop.old.Order(**ORDER)).invoke({}, config("moved"))
            before = stored_channel(saver, "moved", "order")
        shop.forget_old()
        env = {"PYTHONPATH": str(shop.folder)}
        moved = f"{shop.old_type}={shop.new_type}"

        bare = scan_json(target, **env)
        assert thread_entry(bare, "moved")["outcome"] == "refused_type"  # reported, not guessed
        scanned = scan_json(target, "--type-moved", moved, **env)
        entry = thread_entry(scanned, "moved")
        assert entry["outcome"] == "would_repair"
        assert entry["actions"] == {"order": ["type_moved:None"]}

        done = run_cli("repair", target, "--min-idle", "0", "--type-moved", moved, "--json", **env)
        assert done.returncode == 0, done.stderr
        summary = last_json(done.stdout)
        assert summary["threads_repaired"] == 1 and summary["actions"] == {"type_moved": 1}

        with application_saver(kind, tmp_path, pg_uri) as (_, saver):
            after = stored_channel(saver, "moved", "order")
            assert after == rename_types(before, moved_from([moved]))
            assert (
                after != before
                and after.replace(shop.new_name.encode(), shop.old.__name__.encode()) == before
            )  # only the names changed
            loaded = saver.get_tuple(config("moved"))
            assert loaded is not None
            order = loaded.checkpoint["channel_values"]["order"]
            assert type(order).__module__ == shop.new_name and vars(order) == ORDER
            order_graph(saver, order).invoke({}, config("moved"))  # the thread runs on

        again = run_cli("repair", target, "--min-idle", "0", "--type-moved", moved, "--json", **env)
        assert last_json(again.stdout)["threads_repaired"] == 0

        undone = run_cli("undo", target, "--run", summary["run_id"], "--json", **env)
        assert undone.returncode == 0, undone.stderr
        assert last_json(undone.stdout)["threads_restored"] == 0  # the thread ran on: skipped

    (tmp_path / "second").mkdir()
    with shop_on_path(tmp_path / "second", monkeypatch) as shop:
        with application_saver(kind, tmp_path, pg_uri) as (target, saver):
            order_graph(saver, shop.old.Order(**ORDER)).invoke({}, config("undone"))
            before = stored_channel(saver, "undone", "order")
        shop.forget_old()
        env = {"PYTHONPATH": str(shop.folder)}
        moved = f"{shop.old_type}={shop.new_type}"
        done = run_cli("repair", target, "--min-idle", "0", "--type-moved", moved, "--json", **env)
        run_id = last_json(done.stdout)["run_id"]
        undone = run_cli("undo", target, "--run", run_id, "--json", **env)
        assert undone.returncode == 0, undone.stderr
        assert last_json(undone.stdout)["threads_restored"] == 1
        with application_saver(kind, tmp_path, pg_uri) as (_, saver):
            assert stored_channel(saver, "undone", "order") == before  # the old bytes, as stored
        listed = scan_json(target, **env)
        assert thread_entry(listed, "undone")["findings"][0]["code"] == "lost_type"


def test_a_moved_type_needs_a_well_formed_mapping(tmp_path: Path) -> None:
    done = run_cli("scan", f"sqlite:///{tmp_path / 'none.sqlite'}", "--type-moved", "shop.Order")
    assert done.returncode == 2
    assert "not a moved type" in done.stderr and done.stderr.count("\n") == 1
