"""`langgraph-repair show`: one head's messages before and after repair, side by side.

Rows are aligned with difflib over the messages' dict forms, so an untouched
message sits next to itself and what the repair adds, drops or rewrites stands
out: `+` added, `-` dropped, `~` rewritten (same id, new content). Messages dropped
one after another (a trim) are one line: how many, and their tokens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from langchain_core.messages import BaseMessage
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..batch.preview import ThreadPreview, message_dict, over_budget
from ..engine import RepairAction
from ..engine.context import count_tokens
from ..engine.media.limits import megabytes
from .cells import one_line

EXCERPT = 60
CALLS_SHOWN = 10
"""Calls named in one message's cell; the rest are counted (the action lines list them)."""
STYLES = {"+": "green", "-": "red", "~": "yellow", " ": ""}


@dataclass(frozen=True)
class Row:
    mark: str
    """' ' unchanged, '+' added by the repair, '-' dropped, '~' rewritten."""
    before: BaseMessage | None
    after: BaseMessage | None


@dataclass(frozen=True)
class Span:
    """Messages dropped one after another (a trim): shown as one line, never one by one."""

    dropped: list[BaseMessage]

    def describe(self) -> str:
        tokens = count_tokens(self.dropped, None)
        return f"{len(self.dropped):,} messages removed ({tokens:,} tokens)"


def collapse(rows: list[Row]) -> list[Row | Span]:
    """`rows` with each run of two or more dropped messages as one `Span`."""
    out: list[Row | Span] = []
    run: list[Row] = []
    for row in [*rows, None]:
        if row is not None and row.mark == "-" and row.before is not None:
            run.append(row)
            continue
        if len(run) > 1:
            out.append(Span([r.before for r in run if r.before is not None]))
        else:
            out += run
        run = []
        if row is not None:
            out.append(row)
    return out


def align(before: Sequence[BaseMessage], after: Sequence[BaseMessage]) -> list[Row]:
    """Pair each message with its repaired self; the rest are additions and drops."""
    keys_before = [_fingerprint(m) for m in before]
    keys_after = [_fingerprint(m) for m in after]
    matcher = SequenceMatcher(a=keys_before, b=keys_after, autojunk=False)
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [Row(" ", b, a) for b, a in zip(before[i1:i2], after[j1:j2], strict=True)]
        else:
            rows += _pair_changes(before[i1:i2], after[j1:j2])
    return rows


def _fingerprint(message: BaseMessage) -> str:
    return json.dumps(message_dict(message), sort_keys=True, default=str)


def _pair_changes(dropped: Sequence[BaseMessage], added: Sequence[BaseMessage]) -> list[Row]:
    """A dropped and an added message with the same id are one rewritten message."""
    by_id = {m.id: m for m in added if m.id is not None}
    rewritten = {m.id for m in dropped if m.id in by_id}
    rows = [Row("~", m, by_id[m.id]) if m.id in rewritten else Row("-", m, None) for m in dropped]
    return rows + [Row("+", None, m) for m in added if m.id not in rewritten]


def describe(message: BaseMessage | None, in_flight: Sequence[str] = ()) -> str:
    """Role, a one-line excerpt, and the calls it makes or answers."""
    if message is None:
        return ""
    fields = message_dict(message)
    parts = [f"{message.type}:", one_line(_text_of(fields["content"]), EXCERPT)]
    pending = set(in_flight)
    calls = [
        f"{c.get('name')}#{c.get('id')}" + (" (in flight)" if c.get("id") in pending else "")
        for c in fields["tool_calls"][:CALLS_SHOWN]
    ]
    more = len(fields["tool_calls"]) - len(calls)
    if calls:
        parts.append(f"calls {', '.join(calls)}" + (f" and {more:,} more" if more else ""))
    if fields["tool_call_id"]:
        parts.append(f"answers #{fields['tool_call_id']}")
    if fields["synthetic"]:
        parts.append("[synthetic]")
    return " ".join(part for part in parts if part)


def _text_of(content: Any) -> str:
    """The text an operator reads; a media block (already summarized) as kind, type, size."""
    if isinstance(content, str):
        return content
    parts = [
        block if isinstance(block, str) else _block_text(block)
        for block in content or []
        if isinstance(block, (str, dict))
    ]
    return " ".join(parts)


def _block_text(block: dict[str, Any]) -> str:
    if "bytes" in block and "kind" in block:
        return f"[{block['kind']} {block.get('mime_type') or '?'} {megabytes(block['bytes'])}]"
    return str(block.get("text") or block.get("type", ""))


def print_preview(preview: ThreadPreview, console: Console) -> None:
    """The side-by-side table, then the actions and the verdict."""
    title = f"thread {preview.thread_id}"
    if preview.checkpoint_ns:
        title += f"  namespace {preview.checkpoint_ns}"
    table = Table(  # stored ids are text, never markup
        title=Text(one_line(title, 200)),
        caption=Text(one_line(f"head {preview.checkpoint_id}", 200)),
        expand=True,
    )
    table.add_column("", width=1, no_wrap=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("before", overflow="fold", ratio=1)
    table.add_column("after", overflow="fold", ratio=1)
    aligned = align(preview.before, preview.after)
    trimmed = any(action.kind == "context_trimmed" for action in preview.actions)
    rows: list[Row | Span] = collapse(aligned) if trimmed else list(aligned)
    for n, row in enumerate(rows, start=1):
        if isinstance(row, Span):
            table.add_row("-", str(n), Text(row.describe(), style=STYLES["-"]), "")
            continue
        style = STYLES[row.mark]
        table.add_row(
            row.mark,
            str(n),
            Text(describe(row.before, preview.in_flight_calls), style=style),
            Text(describe(row.after, preview.in_flight_calls), style=style),
        )
    console.print(table)
    if preview.tokens:
        before, after = preview.tokens
        console.print(Text(f"tokens: {before:,} before, {after:,} after"))
    for action in preview.actions:
        console.print(Text(one_line(_action_line(action))))
    for finding in preview.findings:
        console.print(Text(one_line(f"  {finding.describe()}", 400)))
    console.print(Text(_verdict(preview)))


def _action_line(action: RepairAction) -> str:
    if action.tool_call_id is None and action.detail:  # a provider rule on a message
        return f"  {action.kind}: message {action.index}: {action.detail}"
    name = f" {action.tool_name}" if action.tool_name else ""
    line = f"  {action.kind}: call #{action.tool_call_id}{name} (message {action.index})"
    return f"{line}: {action.detail}" if action.detail else line


def _verdict(preview: ThreadPreview) -> str:
    if preview.outcome == "reported" and over_budget(preview.findings):
        return "over the token budget, and no trim makes it fit: a run removes nothing"
    if preview.outcome == "clean" and not preview.in_flight_calls:
        return "clean: nothing to repair"
    pending = ", ".join(preview.in_flight_calls)
    if preview.outcome == "clean":
        return f"clean; calls in flight, left to run: {pending}"
    if preview.outcome == "unreadable":
        return "its stored bytes do not decode: a run leaves this head alone"
    if preview.outcome == "refused_type":
        return "a stored type was refused (plain data, not shown): a run leaves this head alone"
    if preview.outcome == "in_flight":
        return f"broken, but work is in flight: a run leaves this head alone ({pending or '-'})"
    return f"a repair run would write these {len(preview.actions)} change(s)"
