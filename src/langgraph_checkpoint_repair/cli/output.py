"""What `langgraph-repair` prints: tables for people, JSON and tab-separated lines for tools."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TextIO

from ..batch.report import RunReport, ThreadReport, UndoReport, thread_order
from ..decoding.integrity import Finding
from ..decoding.names import type_text
from ..stores.generic.listing import SaverListing
from ..waiting import WaitingHead
from .cells import one_line
from .tables import print_table

if TYPE_CHECKING:
    from ..batch.inventory import TypeInventory

THREAD_COLUMNS = ("thread", "namespace", "head checkpoint", "outcome", "actions")
FINDING_CHARS = 160
"""How much of a finding (a question, an error) a table row shows; `--json` keeps it whole."""


def print_threads(report: RunReport, out: TextIO) -> None:
    """One row per broken thread: id, namespace, head checkpoint, outcome, actions."""
    if not report.threads:
        return
    rows: list[tuple[str, ...]] = []
    for thread in sorted(report.threads, key=thread_order):
        actions = "; ".join(
            [f"{ch}: {', '.join(acts)}" for ch, acts in thread.actions.items()]
            + [one_line(describe_finding(f), FINDING_CHARS) for f in thread.findings or ()]
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


WRITES = {
    "repair": ("threads needing repair", "repaired"),
    "materialize": ("threads to materialize", "materialized"),
}
"""What a run's summary calls the heads due a write, and those written, by what it writes."""


def print_summary(report: RunReport, out: TextIO, title: str, writes: str = "repair") -> None:
    due, done = WRITES[writes]
    verb = f"would {writes}" if report.dry_run else done
    written = "checkpoints to write" if report.dry_run else "checkpoints written"
    rows = [(title, report.run_id), *_gate_rows(report)]
    rows += [
        ("threads scanned", f"{report.threads_scanned:,}"),
        *_listing_rows(report.listed_by_saver),
        (due, f"{report.threads_needing_repair:,}"),
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
    if report.waiting_looked:
        rows.append(("threads waiting on a human", f"{report.waiting_heads:,}"))
    if report.waiting_unchecked:
        rows.append(("not checked for a human (undecodable)", f"{report.waiting_unchecked:,}"))
    rows.append(("errors", f"{len(report.errors):,}"))
    if report.channels_not_found:
        rows.append(("channels not found", ", ".join(report.channels_not_found)))
    if report.stopped:
        rows.append(("stopped", "yes: run again to finish"))
    print_table(rows, out)
    for error in report.errors:
        out.write(f"error: thread {error['thread_id']!r} {error['checkpoint_ns']!r}: ")
        out.write(f"{one_line(error['error'])}\n")


def _listing_rows(listing: SaverListing | None) -> list[tuple[str, str]]:
    """What the saver's `list()` showed, where the run had nothing else."""
    if listing is None:
        return []
    shown = f"{listing.checkpoints:,} checkpoints of {listing.threads:,} threads"
    return [("listed by the saver's API", shown)]


UNDECODED = (
    "their bytes do not decode "
    "(`show --thread ID` names what; `repair --rewind-unreadable` gives a readable head)"
)
"""Why a head could not be checked, and what would let the run look."""
GATE_REASONS = {
    "node_missing": "{n} would be stranded: their next work names a node the graph lacks",
    "channel_missing": "{n} would pause forever: they hold a key the graph lacks",
    "drift_unchecked": "{n} could not be checked: " + UNDECODED,
}
IDS_REASON = (
    "{n} thread(s) wait on a question with a stored id that release does not compute: "
    "`repair --interrupt-ids` re-keys them"
)


def _gate_found(report: RunReport) -> list[str]:
    """What the graph's check found: the heads it would strand and why, and those it
    could not check; one phrase each."""
    return [
        reason.format(n=f"{n:,} thread(s)")
        for code, reason in GATE_REASONS.items()
        if (n := report.findings.get(code, 0))
    ]


def _gate_rows(report: RunReport) -> list[tuple[str, str]]:
    """The graph's check, first in the summary."""
    return [("graph check", found) for found in _gate_found(report)]


def waiting_untold(report: RunReport) -> str:
    """Why `scan --waiting`'s list is not whole, in one line."""
    count = f"{report.waiting_unchecked:,} thread(s)"
    return f"{count} could not be checked for an open question: {UNDECODED}"


def gate_verdict(report: RunReport) -> str:
    """Why the gate before a deploy (`scan --graph`, `scan --interrupt-ids`) is closed,
    in one line."""
    closed = []
    if found := _gate_found(report):
        closed.append("the graph's gate is closed: " + "; ".join(found))
    if missed := report.findings.get("interrupt_id_mismatch", 0):
        closed.append("the interrupt ids' gate is closed: " + IDS_REASON.format(n=f"{missed:,}"))
    return "; ".join(closed)


UNDO_FINE = frozenset({"moved_on", "claimed", "not_written", "not_this_run"})
"""Threads an undo leaves as it should: the application wrote since (it wins), another
undo restored it, or the run never wrote there."""
UNDO_HINTS = {
    "refused_type": "their heads hold types strict loading refuses: give the repair's "
    "--graph SPEC, or --allow-type MODULE:NAME for each type named above",
    "foreign_format": "the saver would write a format their rows do not use: undo through "
    "the store's own saver (the URL)",
    "source_missing": "the checkpoint each repair was made from is gone (pruned?)",
    "cannot_move_back": "the work the repair moved cannot go back: see each thread's detail",
    "cannot_copy": "this saver cannot copy a row as stored: undo through the store's URL",
}


def undo_shortfall(report: UndoReport) -> str | None:
    """One line naming the threads an undo should have restored and did not, why, and
    what would let it; None when every thread left alone was meant to be."""
    missed = Counter(s["reason"] for s in report.skipped if s.get("reason") not in UNDO_FINE)
    if not missed:
        return None
    why = "; ".join(
        f"{n:,} {reason} ({UNDO_HINTS.get(reason, 'see skipped')})"
        for reason, n in sorted(missed.items())
    )
    return f"{sum(missed.values()):,} thread(s) not restored: {why}"


WAITING_COLUMNS = ("thread", "namespace", "idle", "node", "question")
QUESTION_CHARS = 60
"""How much of a question's value a table shows; `--json` gives it whole."""


def print_waiting(report: RunReport, out: TextIO, most: int) -> None:
    """One row per head waiting on a human (the first `most`, by thread id): how long it
    has waited, the node that asked and a preview of the question."""
    heads = sorted(report.waiting, key=thread_order)
    rows = [
        (
            head.thread_id,
            head.checkpoint_ns or "-",
            idle_text(head.idle(report.now)),
            ", ".join(sorted({i.node or "?" for i in head.interrupts})),
            question_preview(head),
        )
        for head in heads[:most]
    ]
    if rows:
        print_table(rows, out, header=WAITING_COLUMNS)
    if len(heads) > most:
        out.write(f"... and {len(heads) - most:,} more; `scan --waiting --list` lists every one\n")


def question_preview(head: WaitingHead) -> str:
    """The first question, on one short line; how many more the head asks."""
    first = head.interrupts[0].value
    text = one_line(first if isinstance(first, str) else json.dumps(first, default=repr))
    more = len(head.interrupts) - 1
    shared = "[id shared] " if any(i.id_shared for i in head.interrupts) else ""
    return shared + one_line(text, QUESTION_CHARS) + (f" (+{more} more)" if more else "")


def idle_text(idle: timedelta | None) -> str:
    """An age as a person reads it: 45s, 12m, 5h 3m, 9d 2h; ? when unknown."""
    if idle is None:
        return "?"
    seconds = int(idle.total_seconds())
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m" if minutes else f"{seconds}s"


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


def waiting_line(head: WaitingHead, now: datetime) -> str:
    """`scan --waiting --list`: a waiting head's tab-separated line: thread id, namespace,
    head checkpoint id, seconds idle (empty when unknown), its interrupt ids."""
    idle = head.idle(now)
    seconds = "" if idle is None else str(int(idle.total_seconds()))
    ids = ",".join(str(i.id) for i in head.interrupts if i.id is not None)
    cells = (head.thread_id, head.checkpoint_ns, head.checkpoint_id, seconds, ids)
    return "\t".join(one_line(cell) for cell in cells)


class ListStream:
    """`scan --list` as the run goes: each listed head's line once its page is done
    (broken heads, or with `--waiting` the heads waiting on a human)."""

    def __init__(self, out: TextIO, line: Callable[[Any], str | None] = list_line) -> None:
        self.out = out
        self.line = line
        self.started = False
        """Whether anything was written."""
        self.ended = False

    def __call__(self, thread: Any) -> None:
        line = self.line(thread)
        if line is not None:
            self.out.write(f"{line}\n")
            self.started = True

    def end(self, report: RunReport | None) -> None:
        """The lines are all there is: nothing more to write."""
        self.ended = True
        self.out.flush()


OPENING = '{"threads": ['
"""How `scan --json` begins: the array of threads before the summary's fields."""
WAITING_OPENING = '{"waiting": ['
"""How `scan --waiting --json` begins: the heads waiting on a human come first."""


class JsonStream:
    """`scan --json` as the run goes: still one JSON object on one line, the last of
    stdout. Its `threads` array (with `--waiting`, its `waiting` array) comes first,
    written item by item as each page is done; the summary's fields follow once the run
    ends, however it ends."""

    def __init__(
        self,
        out: TextIO,
        opening: str = OPENING,
        item: Callable[[Any], dict[str, Any]] = ThreadReport.to_json,
    ) -> None:
        self.out = out
        self.opening = opening
        self.item = item
        self.started = False
        """Whether anything was written."""
        self.ended = False

    def __call__(self, thread: Any) -> None:
        self.out.write((", " if self.started else self.opening) + json.dumps(self.item(thread)))
        self.started = True

    def end(self, report: RunReport | None) -> None:
        """Close the array and the object with the summary of `report` (once)."""
        if self.ended:
            return
        self.ended = True
        fields = json.dumps(report.to_json())[1:-1] if report is not None else ""
        opening = "" if self.started else self.opening
        self.out.write(f"{opening}]{', ' if fields else ''}{fields}}}\n")
        self.out.flush()
