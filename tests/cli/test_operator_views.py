"""The operator's views as printed: the side-by-side alignment, and tables that survive
CJK text, tabs and very long ids."""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.batch import ThreadPreview
from langgraph_checkpoint_repair.cli.show import align, print_preview
from langgraph_checkpoint_repair.cli.tables import print_table
from tests.support.histories import ai, human, tool


def test_alignment_marks_what_the_repair_adds_drops_and_rewrites() -> None:
    history = [human("a"), tool("zz"), ai("a1", "c1", "c2"), human("b"), tool("c2")]
    placed = repair_messages(history).messages
    assert [row.mark for row in align(history, placed)] == [" ", "-", " ", "+", "+", " ", "-"]
    dropped = repair_messages(history, policy=RepairPolicy(dangling="drop_call")).messages
    rewritten = [row for row in align(history, dropped) if row.mark == "~"]
    assert [(row.before.id, row.after.id) for row in rewritten if row.before and row.after] == [
        ("a1", "a1")
    ]


def test_the_side_by_side_view_names_every_change() -> None:
    history = [human("a"), tool("zz"), ai("a1", "c1"), human("b")]
    result = repair_messages(history)
    preview = ThreadPreview("t-1", "", "cp-1", "messages", history, result.messages,
                            result.actions, (), "would_repair")  # fmt: skip
    out = io.StringIO()
    print_preview(preview, Console(file=out, width=240))
    text = out.getvalue()
    assert "[synthetic]" in text and "answers #c1" in text
    assert "orphan_dropped: call #zz" in text and "placeholder: call #c1" in text
    assert "a repair run would write these 2 change(s)" in text


@pytest.mark.parametrize("width", [40, 80, 120])
def test_tables_fit_the_width_whatever_the_cells_hold(width: int) -> None:
    rows = [
        ("线程-一二三四五六七八九十-スレッド", "ns\twith\ttabs", "placeholder:c1"),
        ("line\nbreak\rand\x07bell", "-", "moved:c2"),
        ("t" * 300, "-", "orphan_dropped:" + "x" * 90),
    ]
    out = io.StringIO()
    print_table(rows, out, header=("thread", "namespace", "actions"), width=width)
    lines = out.getvalue().splitlines()
    assert all(cell_len(line) <= width for line in lines)
    assert not any(c in out.getvalue() for c in "\t\r\x07")
    assert set("线程一二三四五六七八九十スレッド") <= set(out.getvalue())
    assert out.getvalue().count("t") >= 300
