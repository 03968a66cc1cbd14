"""The plan of what a thread keeps, on rows made up to cover every shape: whatever the
chain, each kept checkpoint can still be loaded as LangGraph loads it."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_checkpoint_repair.retention.keep import (
    StoredCheckpoint,
    ThreadPlan,
    plan_thread,
    seed_missing,
)


def row(cid: str, parent: str | None, ns: str = "", **fields: object) -> StoredCheckpoint:
    return StoredCheckpoint(ns, cid, parent, **fields)  # type: ignore[arg-type]


@st.composite
def threads(draw: st.DrawFn) -> list[StoredCheckpoint]:
    """One namespace: a chain (with a fork now and then), a delta channel stored at some
    rows, pre-v4 rows that read their parent's sends, versions naming blobs."""
    size = draw(st.integers(1, 25))
    rows: list[StoredCheckpoint] = []
    for n in range(size):
        cid = f"c{n:03d}"
        parent = None if n == 0 else f"c{draw(st.integers(max(0, n - 3), n - 1)):03d}"
        holds = frozenset({"messages"}) if draw(st.booleans()) and n % 3 == 0 else frozenset()
        versions = {"messages": f"v{n // 2}", "other": f"w{n // 4}"}
        rows.append(
            row(
                cid,
                parent,
                versions=versions,
                holds=holds,
                delta=frozenset({"messages"}),
                needs_parent=draw(st.booleans()) and n % 5 == 0,
                step=n - 1,
            )
        )
    return rows


def loaded_needs(rows: dict[str, StoredCheckpoint], cid: str) -> set[str]:
    """What loading `cid` reads, followed the slow way: the sends parent, and the walk
    from the parent to the first row storing the delta channel."""
    needed: set[str] = set()
    me = rows[cid]
    if me.needs_parent and me.parent_id in rows:
        needed.add(me.parent_id)
    if "messages" not in me.holds:
        cursor = me.parent_id
        while cursor is not None and cursor in rows:
            needed.add(cursor)
            if "messages" in rows[cursor].holds:
                break
            cursor = rows[cursor].parent_id
    return needed


@settings(max_examples=300, deadline=None)
@given(threads(), st.integers(1, 4))
def test_every_kept_checkpoint_loads_as_before(rows: list[StoredCheckpoint], keep: int) -> None:
    plan = plan_thread(rows, keep)
    by_id = {r.checkpoint_id: r for r in rows}
    kept = set(plan.kept.get("", []))
    deleted = set(plan.deleted.get("", []))

    assert kept | deleted == set(by_id) and not kept & deleted
    assert max(by_id) in kept
    for cid in kept:
        assert loaded_needs(by_id, cid) <= kept, cid
    named = {pair for cid in kept for pair in by_id[cid].versions.items()}
    assert not named & set(plan.blobs.get("", []))
    orphans = {cid for cid in kept if by_id[cid].parent_id in deleted}
    assert set(plan.orphaned.get("", [])) == orphans


def test_keep_last_follows_the_heads_parents_not_the_ids() -> None:
    rows = [row("a", None), row("b", "a"), row("c", "b"), row("d", "b"), row("e", "d")]
    plan = plan_thread(rows, keep_last=3)
    assert plan.kept == {"": ["b", "d", "e"]}
    assert plan.deleted == {"": ["a", "c"]}
    assert plan.orphaned == {"": ["b"]}


def test_a_delta_chain_is_kept_back_to_its_seed_and_no_further() -> None:
    delta = frozenset({"messages"})
    seeded = frozenset({"messages"})
    rows = [
        row("a", None, holds=seeded, delta=delta, versions={"messages": "1"}),
        row("b", "a", holds=seeded, delta=delta, versions={"messages": "2"}),
        row("c", "b", delta=delta, versions={"messages": "3"}),
        row("d", "c", delta=delta, versions={"messages": "4"}),
    ]
    plan = plan_thread(rows)
    assert plan.kept == {"": ["b", "c", "d"]}
    assert plan.blobs == {"": [("messages", "1")]}


def test_a_pre_v4_head_keeps_the_parent_holding_its_sends() -> None:
    rows = [row("a", None), row("b", "a"), row("c", "b", needs_parent=True)]
    assert plan_thread(rows).kept == {"": ["b", "c"]}


def test_a_subgraph_call_lives_while_its_root_checkpoint_is_kept() -> None:
    root = [row("r1", None), row("r2", "r1")]
    paused = [
        row("s1", None, ns="ask:t2", root_id="r2"),
        row("s2", "s1", ns="ask:t2", root_id="r2"),
    ]
    done = [row("s0", None, ns="ask:t1", root_id="r1")]
    unsaved = [row("s9", None, ns="ask:t9", root_id="r9")]
    plan: ThreadPlan = plan_thread([*root, *paused, *done, *unsaved])
    assert plan.dropped_namespaces == frozenset({"ask:t1"})
    assert plan.kept == {"": ["r2"], "ask:t2": ["s2"], "ask:t9": ["s9"]}
    assert plan.deleted == {"": ["r1"], "ask:t2": ["s1"], "ask:t1": ["s0"]}


def test_a_kept_repair_keeps_the_head_it_repaired() -> None:
    rows = [row("a", None), row("b", "a"), row("c", "b", repaired_from="b")]
    assert plan_thread(rows).kept == {"": ["b", "c"]}


@settings(max_examples=300, deadline=None)
@given(threads(), st.integers(1, 4))
def test_a_prune_never_leaves_a_chain_cut(rows: list[StoredCheckpoint], keep: int) -> None:
    """What a plan keeps, parent pointers cleared as the prune clears them, still finds
    every delta channel's seed (or the thread's first checkpoint)."""
    assert not seed_missing(rows)
    plan = plan_thread(rows, keep)
    kept, orphaned = set(plan.kept.get("", [])), set(plan.orphaned.get("", []))
    left = [
        replace(r, parent_id=None) if r.checkpoint_id in orphaned else r
        for r in rows
        if r.checkpoint_id in kept
    ]
    assert not seed_missing(left)


def test_a_chain_cut_short_is_told_from_one_that_begins() -> None:
    delta = frozenset({"messages"})

    def chain(*parents: str | None, first_step: int = -1) -> list[StoredCheckpoint]:
        found = []
        for n, parent in enumerate(parents):
            step = first_step + n
            versions = {"messages": str(n)}
            found.append(row(f"c{n}", parent, versions=versions, delta=delta, step=step))
        return found

    assert not seed_missing(chain(None, "c0", "c1"))  # back to the input: starts empty
    assert seed_missing(chain("gone", "c0", "c1"))  # the first row's parent is not stored
    assert seed_missing(chain(None, "c0", "c1", first_step=0))  # a pointer cleared mid-thread
    seeded = chain("gone", "c0", "c1")
    seeded[1] = replace(seeded[1], holds=delta)
    assert not seed_missing(seeded)  # the seed is kept: what came before is not needed
