"""What `langgraph-repair` prints: a progress line on a terminal, tables, JSON."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ..batch import RunReport, UndoReport
from .cells import one_line


class Progress:
    """A one-line progress display on stderr, only when stderr is a terminal."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.started = time.monotonic()

    def __call__(self, report: RunReport) -> None:
        if not self.enabled:
            return
        rate = report.threads_scanned / max(time.monotonic() - self.started, 1e-6)
        self.stream.write(
            f"\r{report.threads_scanned:,} scanned · {report.threads_needing_repair:,} broken"
            f" · {report.threads_repaired:,} repaired · {rate:,.0f} threads/s "
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def print_threads(report: RunReport, out: TextIO) -> None:
    """One row per broken thread: id, namespace, head checkpoint, outcome, actions."""
    if not report.threads:
        return
    rows = [("thread", "namespace", "head checkpoint", "outcome", "actions")]
    for thread in sorted(report.threads, key=lambda t: (t.thread_id, t.checkpoint_ns)):
        actions = "; ".join(f"{ch}: {', '.join(acts)}" for ch, acts in thread.actions.items())
        rows.append(
            (
                thread.thread_id,
                thread.checkpoint_ns or "-",
                thread.checkpoint_id,
                thread.outcome,
                actions or "-",
            )
        )
    _table(rows, out)
    out.write("\n")


def print_summary(report: RunReport, out: TextIO, title: str) -> None:
    verb = "would repair" if report.dry_run else "repaired"
    written = "checkpoints to write" if report.dry_run else "checkpoints written"
    rows = [
        (title, report.run_id),
        ("threads scanned", f"{report.threads_scanned:,}"),
        ("threads needing repair", f"{report.threads_needing_repair:,}"),
        (f"threads {verb}", f"{report.threads_repaired:,}"),
        (written, f"{report.checkpoints_written:,}"),
    ]
    rows += [(f"skipped ({reason})", f"{n:,}") for reason, n in sorted(report.skipped.items())]
    rows += [(f"action {kind}", f"{n:,}") for kind, n in sorted(report.actions.items())]
    rows.append(("errors", f"{len(report.errors):,}"))
    if report.channels_not_found:
        rows.append(("channels not found", ", ".join(report.channels_not_found)))
    if report.stopped:
        rows.append(("stopped", "yes: run again to finish"))
    _table(rows, out)
    for error in report.errors:
        out.write(f"error: thread {error['thread_id']} {error['checkpoint_ns']!r}: ")
        out.write(f"{error['error']}\n")


def print_undo(report: UndoReport, out: TextIO) -> None:
    rows = [
        ("undo run", report.run_id),
        ("undoing", report.undo_of),
        ("threads restored", f"{report.threads_restored:,}"),
        ("threads skipped", f"{report.threads_skipped:,}"),
    ]
    _table(rows, out)
    for skipped in report.skipped:
        out.write(f"skipped: thread {skipped['thread_id']} ({skipped['reason']})\n")


def print_json(payload: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(payload, sort_keys=False) + "\n")


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        out.write("\n")


def list_lines(report: RunReport) -> list[str]:
    """`scan --list`: one tab-separated line per broken head, for other tools to read:
    thread id, namespace, head checkpoint id, its violation codes (the action kinds)."""
    lines = []
    for thread in sorted(report.threads, key=lambda t: (t.thread_id, t.checkpoint_ns)):
        codes = sorted(
            {action.split(":", 1)[0] for acts in thread.actions.values() for action in acts}
        )
        if codes:
            cells = (thread.thread_id, thread.checkpoint_ns, thread.checkpoint_id, ",".join(codes))
            lines.append("\t".join(one_line(cell) for cell in cells))
    return lines
