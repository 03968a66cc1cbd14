"""Tables for people: Rich lays them out to the terminal's width, measures CJK text as
two cells and folds very long ids; every cell is made one line first, so tabs and
newlines in ids cannot break a row. Written to a file or a pipe, rows are not folded:
one line per row, for grep. Rich is imported by the first table: `--json` and `--list`
print none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from .cells import one_line

if TYPE_CHECKING:
    from rich.console import Console


def print_table(
    rows: Sequence[Sequence[str]],
    out: TextIO,
    *,
    header: Sequence[str] | None = None,
    width: int | None = None,
) -> None:
    """Rows under an optional header; without a header, a plain two-space layout."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(
        box=box.SIMPLE_HEAD if header else None,
        show_header=header is not None,
        pad_edge=False,
        padding=(0, 2, 0, 0),
    )
    columns = len(header) if header else max((len(row) for row in rows), default=0)
    for name in header or [""] * columns:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(Text(one_line(cell)) for cell in row))
    console(out, width).print(table)


UNFOLDED = 4096
"""Columns given to output that is not a terminal: wide enough never to fold a row."""


def console(out: TextIO, width: int | None = None) -> Console:
    """A console writing to `out`, colour only where it is a terminal."""
    from rich.console import Console

    if width is None and not out.isatty():
        width = UNFOLDED
    return Console(file=out, highlight=False, soft_wrap=False, width=width)
