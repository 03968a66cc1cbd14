"""What `langgraph-repair` prints: tables for people, JSON and tab-separated lines for tools."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ..batch import RunReport, ThreadReport, TypeInventory, UndoReport
from ..batch.report import thread_order
from ..decoding.integrity import Finding
from ..decoding.names import type_text
from .cells import one_line
from .tables import print_table

THREAD_COLUMNS = ("thread", "namespace", "head checkpoint", "outcome", "actions")


def print_threads(report: RunReport, out: TextIO) -> None:
    """One row per broken thread: id, namespace, head checkpoint, outcome, actions."""
    if not report.threads:
        return
    rows: list[tuple[str, ...]] = []
    for thread in sorted(report.threads, key=thread_order):
        actions = "; ".join(
            [f"{ch}: {', '.join(acts)}" for ch, acts in thread.actions.items()]
            + [describe_finding(finding) for finding in thread.findings or ()]
            + _no_rewind(thread.rewind)
        )
        rows.append(
            (
                thread.thread_id,
                thread.checkpoint_ns or "-",
                thread.checkpoint_id,
                thread.outcome,
                actions or "-",
            )
        )
    print_table(rows, out, header=THREAD_COLUMNS)
    if report.threads_not_listed:
        where = "`scan --list` lists"
        if not report.dry_run:
            where = f"the audit of run {report.run_id} holds"
        out.write(f"... and {report.threads_not_listed:,} more threads; {where} every one\n")


def _no_rewind(rewind: dict[str, Any] | None) -> list[str]:
    """Why an unreadable head was not rewound, where a rewind was asked for."""
    if rewind is None or rewind.get("reason") is None:
        return []
    return [f"not rewound: {rewind['reason']} (passed over {rewind['passed_over']})"]


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
    if report.writes_rewritten:  # pending writes rewritten in place (nul_text)
        rewritten = "writes to rewrite" if report.dry_run else "writes rewritten"
        rows.append((rewritten, f"{report.writes_rewritten:,}"))
    rows += [(f"skipped ({reason})", f"{n:,}") for reason, n in sorted(report.skipped.items())]
    rows += [(f"action {kind}", f"{n:,}") for kind, n in sorted(report.actions.items())]
    if report.actions.get("rewound"):
        rows.append(("checkpoints passed over", f"{report.checkpoints_passed_over:,}"))
    rows += [(f"threads with {code}", f"{n:,}") for code, n in sorted(report.findings.items())]
    rows += [
        (f"threads over a request limit ({code})", f"{n:,} (measured, not fixed)")
        for code, n in sorted(report.history_limits.items())
    ]
    rows.append(("errors", f"{len(report.errors):,}"))
    if report.channels_not_found:
        rows.append(("channels not found", ", ".join(report.channels_not_found)))
    if report.stopped:
        rows.append(("stopped", "yes: run again to finish"))
    print_table(rows, out)
    for error in report.errors:
        out.write(f"error: thread {error['thread_id']!r} {error['checkpoint_ns']!r}: ")
        out.write(f"{one_line(error['error'])}\n")


def print_undo(report: UndoReport, out: TextIO) -> None:
    rows = [
        ("undo run", report.run_id),
        ("undoing", report.undo_of),
        ("threads restored", f"{report.threads_restored:,}"),
        ("threads skipped", f"{report.threads_skipped:,}"),
    ]
    if report.writes_restored:
        rows.append(("writes restored", f"{report.writes_restored:,}"))
    if report.stopped:
        rows.append(("stopped", "yes: run the command again to finish"))
    print_table(rows, out)
    for skipped in report.skipped:
        write = f" write {skipped['task_id']!r}/{skipped['idx']}" if "task_id" in skipped else ""
        out.write(f"skipped: thread {skipped['thread_id']!r}{write} ({skipped['reason']})\n")


def describe_finding(finding: dict[str, Any]) -> str:
    """A finding as `ThreadReport.findings` keeps it, in one line for a person."""
    return Finding(
        finding["code"], finding["channel"], finding["task_id"], finding["type"], finding["error"]
    ).describe()


def print_types(inventory: TypeInventory, out: TextIO) -> None:
    """The stored types, most held first, then the list strict msgpack needs."""
    rows = [
        (type_text(count.type_name), f"{count.threads:,}", count.status)
        for count in inventory.types
    ]
    if rows:
        print_table(rows, out, header=("type", "threads", "status"))
    out.write(f"{inventory.threads_scanned:,} threads looked at\n")
    lost = [type_text(count.type_name) for count in inventory.types if count.status == "lost"]
    if lost:
        named = one_line(", ".join(lost))
        out.write(
            f"not found here (lost; `scan` names the threads): {named}\n"
            "  listed below all the same: this command sees the application's types only "
            "where their modules import (run it in the application's environment, or with "
            "its code on PYTHONPATH)\n"
        )
    if inventory.values_undecodable:
        out.write(f"{inventory.values_undecodable:,} stored values do not decode (see `scan`)\n")
    out.write(f"allowed_msgpack_modules={inventory.allowed_msgpack_modules!r}\n")


def print_json(payload: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(payload, sort_keys=False) + "\n")


def list_line(thread: ThreadReport) -> str | None:
    """`scan --list`: a broken head's tab-separated line, for other tools to read: thread
    id, namespace, head checkpoint id, its violation codes (the action kinds, then the
    integrity findings: nul_text, lost_type, undecodable); a head left alone for a
    refused type has the code `refused_type` too. None for a head with no code."""
    codes = thread.codes
    if thread.outcome == "refused_type":
        codes.append("refused_type")
    if not codes:
        return None
    cells = (thread.thread_id, thread.checkpoint_ns, thread.checkpoint_id, ",".join(codes))
    return "\t".join(one_line(cell) for cell in cells)


class ListStream:
    """`scan --list` as the run goes: each broken head's line once its page is done."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.started = False
        """Whether anything was written."""
        self.ended = False

    def __call__(self, thread: ThreadReport) -> None:
        line = list_line(thread)
        if line is not None:
            self.out.write(f"{line}\n")
            self.started = True

    def end(self, report: RunReport | None) -> None:
        """The lines are all there is: nothing more to write."""
        self.ended = True
        self.out.flush()


class JsonStream:
    """`scan --json` as the run goes: still one JSON object on one line, the last of
    stdout. Its `threads` array comes first, written item by item as each page is
    done; the summary's fields follow once the run ends, however it ends."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.started = False
        """Whether anything was written."""
        self.ended = False

    def __call__(self, thread: ThreadReport) -> None:
        self.out.write((", " if self.started else OPENING) + json.dumps(thread.to_json()))
        self.started = True

    def end(self, report: RunReport | None) -> None:
        """Close the array and the object with the summary of `report` (once)."""
        if self.ended:
            return
        self.ended = True
        fields = json.dumps(report.to_json())[1:-1] if report is not None else ""
        opening = "" if self.started else OPENING
        self.out.write(f"{opening}]{', ' if fields else ''}{fields}}}\n")
        self.out.flush()


OPENING = '{"threads": ['
"""How `scan --json` begins: the array of threads before the summary's fields."""
