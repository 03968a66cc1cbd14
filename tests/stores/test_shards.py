"""`--shard K/N` on PostgreSQL: ranges of thread ids that cover the store exactly once,
the same in every process and on every rerun, each shard reading only its part."""

from __future__ import annotations

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.stores import Selection, astore_for, store_for
from tests.support.cli_runs import last_json, run_cli
from tests.support.postgres_threads import BROKEN, CLEAN, many_store, put_chain, saver_on
from tests.support.read_counts import Reads, flush, settled_reads

SHARD_COUNTS = [1, 2, 3, 8]
ODD_IDS = ["", " ", "a", "A", "a b", "é", "e", "日本語", "🙂", "z", "Zed", "~", "thread-07"]

HeadSet = set[tuple[str, str]]


def heads(saver: PostgresSaver, selection: Selection) -> HeadSet:
    pages = store_for(saver).pages(selection)
    found = [(h.thread_id, h.checkpoint_ns) for page in pages for h in page]
    assert len(found) == len(set(found))
    return set(found)


def parts(saver: PostgresSaver, n: int) -> list[HeadSet]:
    return [heads(saver, Selection(shard=(k, n), page_size=5)) for k in range(n)]


def assert_exact_cover(whole: HeadSet, shards: list[HeadSet]) -> None:
    assert set().union(*shards) == whole
    assert sum(len(part) for part in shards) == len(whole)  # pairwise disjoint


def odd_store(saver: PostgresSaver) -> None:
    for n, thread_id in enumerate(ODD_IDS):
        put_chain(saver, thread_id, "", BROKEN if n % 2 else CLEAN)
    for thread_id in ("", "a", "日本語"):  # subgraphs: more heads of the same threads
        put_chain(saver, thread_id, "researcher:1", BROKEN)
        put_chain(saver, thread_id, "researcher:1|writer:2", CLEAN)


@pytest.mark.parametrize("kind", ["empty", "fewer_than_shards", "odd_ids", "many"])
async def test_shards_cover_the_store_exactly_once(pg_uri: str, kind: str) -> None:
    with saver_on(pg_uri) as saver:
        if kind == "fewer_than_shards":
            for thread_id in ("one", "two", ""):
                put_chain(saver, thread_id, "", BROKEN)
        elif kind == "odd_ids":
            odd_store(saver)
        elif kind == "many":
            await many_store(pg_uri, saver, copies=150)
        whole = heads(saver, Selection(page_size=5))
        assert len(whole) == {"empty": 0, "fewer_than_shards": 3, "odd_ids": 19}.get(kind, 7 * 151)
        for n in SHARD_COUNTS:
            shards = parts(saver, n)
            assert_exact_cover(whole, shards)
            assert parts(saver, n) == shards  # a rerun (a new store object) covers the same
            if kind == "many" and n > 1:
                assert max(len(part) for part in shards) < 2 * len(whole) / n  # they split it


async def test_the_async_store_cuts_the_same_ranges(pg_uri: str) -> None:
    with saver_on(pg_uri) as saver:
        odd_store(saver)
        await many_store(pg_uri, saver, copies=20)
        expected = parts(saver, 3)
    async with AsyncPostgresSaver.from_conn_string(pg_uri) as asaver:
        store = astore_for(asaver)
        got: list[HeadSet] = []
        for k in range(3):
            pages = store.pages(Selection(shard=(k, 3), page_size=5))
            got.append({(h.thread_id, h.checkpoint_ns) async for page in pages for h in page})
    assert got == expected


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_shard_also_reads_what_its_range_gained_while_it_ran(
    pg_uri: str, is_async: bool
) -> None:
    """Threads created while shard 0/2 runs move its upper boundary up: the shard reads
    the heads it gained too, so nothing falls between it and shard 1/2 started after."""
    older, newer = [f"a-{n}" for n in range(10)], [f"b-{n}" for n in range(10)]
    with saver_on(pg_uri) as saver:
        for thread_id in older:
            put_chain(saver, thread_id, "", CLEAN)
        selection = Selection(shard=(0, 2), page_size=2)
        if is_async:
            async with AsyncPostgresSaver.from_conn_string(pg_uri) as asaver:
                pages = astore_for(asaver).pages(selection)
                first = {(h.thread_id, h.checkpoint_ns) for h in await anext(pages)}
                for thread_id in newer:
                    put_chain(saver, thread_id, "", CLEAN)
                rest = {(h.thread_id, h.checkpoint_ns) async for page in pages for h in page}
        else:
            sync_pages = store_for(saver).pages(selection)
            first = {(h.thread_id, h.checkpoint_ns) for h in next(sync_pages)}
            for thread_id in newer:
                put_chain(saver, thread_id, "", CLEAN)
            rest = {(h.thread_id, h.checkpoint_ns) for page in sync_pages for h in page}
        later = heads(saver, Selection(shard=(1, 2), page_size=2))
    assert first | rest == {(t, "") for t in older}  # a-5..a-9 were shard 1's at its start
    assert later == {(t, "") for t in newer}


async def test_writes_on_existing_threads_move_no_boundary(pg_uri: str) -> None:
    """A shard restarted after the others repaired their part covers the same heads."""
    with saver_on(pg_uri) as saver:
        await many_store(pg_uri, saver, copies=60)
        before = parts(saver, 3)
        for k in (1, 2):
            report = repair_threads(saver, shard=(k, 3), min_idle=0)
            assert report.threads_repaired > 0
        assert parts(saver, 3) == before


async def test_shards_run_as_commands_repair_each_broken_head_once(pg_uri: str) -> None:
    with saver_on(pg_uri) as saver:
        await many_store(pg_uri, saver, copies=40)
    scanned = last_json(run_cli("scan", pg_uri, "--min-idle", "0", "--json").stdout)
    broken = scanned["threads_needing_repair"]
    assert broken > 0
    repaired = 0
    for k in range(3):
        done = run_cli("repair", pg_uri, "--shard", f"{k}/3", "--min-idle", "0", "--json")
        assert done.returncode == 0, done.stderr
        repaired += last_json(done.stdout)["threads_repaired"]
    assert repaired == broken
    verbose = run_cli("scan", pg_uri, "--shard", "1/3", "--min-idle", "0", "-v")
    assert "shard 1/3: thread ids from '" in verbose.stderr  # which part this pod covers
    after = last_json(run_cli("scan", pg_uri, "--min-idle", "0", "--json").stdout)
    assert after["threads_needing_repair"] == 0
    assert after["threads_scanned"] == scanned["threads_scanned"]


def scan_reads(uri: str, shard: tuple[int, int] | None) -> Reads:
    """What a scan of `shard` (None: the whole store) reads of the heads' table: the
    lesser of two scans, as the server's counters may also take in reads that are not
    the scan's (autovacuum's, on a machine busy with other suites)."""
    return min((one_scan_reads(uri, shard) for _ in range(2)), key=lambda read: read.tuples)


def one_scan_reads(uri: str, shard: tuple[int, int] | None) -> Reads:
    """The reads of one scan alone: taken once the counters settle, before and after, so
    that a backend of the previous scan publishing late is not counted in this one."""
    with saver_on(uri) as saver:
        before = settled_reads(uri, "checkpoints")
        repair_threads(saver, dry_run=True, shard=shard, min_idle=0)
        flush(saver.conn)  # type: ignore[arg-type]
    return settled_reads(uri, "checkpoints") - before


async def test_a_shard_reads_only_its_part_of_the_table(pg_uri: str) -> None:
    """Counted on `checkpoints`, where the heads are chosen: on a table this small the
    planner reads the blobs (one row per head) in a sequential scan whatever the shard."""
    with saver_on(pg_uri) as saver:
        await many_store(pg_uri, saver, copies=1000)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        # as autovacuum leaves a store: it has nothing left to do (this schema's tables only)
        conn.execute("VACUUM ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes")
    whole = scan_reads(pg_uri, None)
    for n in (2, 8):
        shards = [scan_reads(pg_uri, (k, n)) for k in range(n)]
        total = sum(shards, Reads(0, 0))
        assert max(part.tuples for part in shards) < (1 / n + 0.25) * whole.tuples
        assert total.tuples <= 1.25 * whole.tuples
        assert total.buffers <= 1.25 * whole.buffers
