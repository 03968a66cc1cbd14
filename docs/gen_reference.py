"""Write the generated reference pages at build time (run by the mkdocs-gen-files plugin).

Each page is made from the objects the code itself uses: the command line from the
`langgraph-repair` parser, the policy from the `RepairPolicy` dataclass and its
docstring, the action kinds from `ActionKind`, the exit codes from `EXIT_CODES`, the
environment variables from the names the package reads. A name that disappears from the
code, or a new action kind without a description here, fails the build.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import typing
from collections.abc import Iterator
from pathlib import Path

import mkdocs_gen_files

import langgraph_checkpoint_repair
from langgraph_checkpoint_repair import RepairPolicy, server, targets
from langgraph_checkpoint_repair.cli import arguments, commands
from langgraph_checkpoint_repair.codes import FINDING_CODES, ActionKind
from langgraph_checkpoint_repair.decoding import strict
from langgraph_checkpoint_repair.storage_policy import StoragePolicy

PACKAGE = Path(langgraph_checkpoint_repair.__file__).parent


def cell(text: str) -> str:
    """Text safe inside one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


def subcommands(root: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in root._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise LookupError("the parser has no subcommands")


def option_rows(command: argparse.ArgumentParser) -> Iterator[str]:
    for action in command._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            name = ", ".join(f"`{flag}`" for flag in action.option_strings)
            if action.nargs != 0:
                name += f" `{action.metavar or action.dest.upper()}`"
        else:
            name = f"`{action.metavar or action.dest}`"
        notes = []
        if action.required:
            notes.append("required")
        if isinstance(action, argparse._AppendAction):
            notes.append("repeatable")
        if isinstance(action, argparse._CountAction):
            notes.append("repeatable")
        if action.nargs == "?":
            notes.append("optional")
        yield f"| {name} | {cell(action.help or '')} | {', '.join(notes)} |"


def cli_page() -> str:
    root = commands.parser()
    lines = [
        "# Command line: `langgraph-repair`",
        "",
        "Generated from the command's own argument parser. Every command takes a TARGET "
        "(or reads it from `LANGGRAPH_REPAIR_TARGET`) and exits with one of the "
        "[exit codes](exit-codes.md).",
        "",
        f"{cell(root.description or '')}",
        "",
        "```text",
        root.format_usage().strip(),
        "```",
        "",
    ]
    for name, command in subcommands(root).items():
        lines += [
            f"## `{name}`",
            "",
            cell(command.description or ""),
            "",
            "```text",
            command.format_usage().strip(),
            "```",
            "",
            "| Argument | Meaning | Notes |",
            "| --- | --- | --- |",
            *option_rows(command),
            "",
            "Example:",
            "",
            "```text",
            commands.COMMANDS[name].example,
            "```",
            "",
        ]
    return "\n".join(lines)


def exit_codes_page() -> str:
    rows = []
    for line in arguments.EXIT_CODES.splitlines()[1:]:
        code, meaning = line.split(maxsplit=1)
        rows.append(f"| `{code}` | {cell(meaning)} |")
    return "\n".join(
        [
            "# Exit codes",
            "",
            "Generated from the command line's own list; every command prints it under "
            "`--help`. A usage or connection error is one line on stderr, with no traceback.",
            "",
            "| Code | Meaning |",
            "| --- | --- |",
            *rows,
            "",
        ]
    )


def policy_descriptions() -> dict[str, str]:
    """The `- `field`: text` bullets of the RepairPolicy docstring and of the storage
    knobs' it inherits (`StoragePolicy`), by field."""
    found: dict[str, str] = {}
    doc = (RepairPolicy.__doc__ or "") + (StoragePolicy.__doc__ or "")
    for bullet in re.split(r"\n\s*- ", doc)[1:]:
        names = re.match(r"((?:`\w+`(?: / )?)+):\s*(.*)", bullet, re.S)
        if names is None:
            continue
        for field_name in re.findall(r"`(\w+)`", names[1]):
            found[field_name] = cell(names[2])
    return found


def policy_page() -> str:
    described = policy_descriptions()
    sections = []
    engine_first = sorted(dataclasses.fields(RepairPolicy), key=lambda field: field.kw_only is True)
    for field in engine_first:
        if field.name not in described:
            raise LookupError(f"RepairPolicy.{field.name} has no bullet in the docstring")
        default = "" if field.default is dataclasses.MISSING else repr(field.default)
        sections += [
            f"## `{field.name}`",
            "",
            f"Type `{' '.join(str(field.type).split())}`, default `{default}`.",
            "",
            described[field.name],
            "",
        ]
    return "\n".join(
        [
            "# `RepairPolicy` fields",
            "",
            "Generated from the `RepairPolicy` dataclass and its docstring. The policy is "
            "frozen and checked when it is made: a value outside its choices is a "
            "`ValueError`, a value of the wrong type a `TypeError`. On the command line "
            "each field is `--policy KEY=VALUE`; on the Agent Server, "
            "`LANGGRAPH_REPAIR_POLICY` takes them comma-separated (`token_counter` is set "
            "in Python only).",
            "",
            *sections,
        ]
    )


# What each action kind means, and which setting produces it. The kinds themselves come
# from `ActionKind`; a kind added there without a line here stops the build.
BY_DEFAULT = "by default"
PROVIDER = "with `provider=`"
BUDGET = "with a token budget (`max_input_tokens=` or the profile's)"
KINDS: dict[str, tuple[str, str]] = {
    "placeholder": ("a call without a result got a synthetic error result", BY_DEFAULT),
    "call_dropped": ("a call without a result was removed", 'with `dangling="drop_call"`'),
    "moved": ("a result was moved right after its call", BY_DEFAULT),
    "orphan_dropped": (
        "a result that answers no call was removed",
        'by default (`orphans="keep"` keeps it)',
    ),
    "duplicate_dropped": (
        "a second result for an answered call was removed",
        'by default (`duplicates="keep"` keeps it)',
    ),
    "duplicate_call_dropped": (
        "a call reusing an id already used in the same AI message was removed",
        BY_DEFAULT,
    ),
    "unrepairable": ("a call without an id: reported, nothing changed", BY_DEFAULT),
    "id_renamed": ("a call id the provider rejects was renamed everywhere", PROVIDER),
    "thinking_dropped": ("an unsigned or foreign thinking block was removed", PROVIDER),
    "reasoning_dropped": ("a reasoning block the provider rejects was removed", PROVIDER),
    "call_block_dropped": ("a `function_call` block without its call was removed", PROVIDER),
    "content_filled": ("an empty content the provider rejects got a short text", PROVIDER),
    "content_cleared": ("a whitespace-only assistant text became empty", PROVIDER),
    "media_removed": (
        "a media block over a limit became a text placeholder",
        "with `provider=` or `model_profile=` (media limits)",
    ),
    "media_downscaled": (
        "an image was re-encoded within the limit",
        'with media limits and `media="downscale"`',
    ),
    "result_truncated": (
        "a long tool result was cut to its head and tail",
        "with `max_result_chars=` or a token budget",
    ),
    "context_trimmed": (
        "the oldest messages were removed to fit the token budget, behind one marker "
        "standing where they stood",
        BUDGET,
    ),
    "over_budget": (
        "no trim makes the history fit: nothing was removed, and it is reported (the batch "
        "job reports it as a finding of the head, below)",
        BUDGET,
    ),
    "type_moved": (
        "a lost stored type was renamed in the stored bytes to the class it moved to "
        "(no object built; a batch repair, recorded on the channel)",
        "with `--type-moved old.module:Old=new.module:New`",
    ),
    "rewound": (
        "a head that does not decode got a new head copying its newest readable ancestor "
        "(batch job only; see [threads that will not load](../how-to/unreadable-threads.md))",
        "with `repair --rewind-unreadable`",
    ),
    "nul_replaced": (
        "each U+0000 in a pending write's text became U+FFFD, the write rewritten in place",
        "by the batch job on PostgreSQL, by default",
    ),
    "nul_stripped": (
        "each U+0000 in a pending write's text was removed, the write rewritten in place",
        'by the batch job on PostgreSQL, with `nul_text="strip"`',
    ),
    "resume_dropped": (
        "a human's answer already taken was left out of a load, or its pending write "
        "deleted (audited, undoable), so LangGraph asks the next question again (see "
        "[resume safely](../how-to/resume-safely.md))",
        "by `PatchingCheckpointer` and by the batch job on PostgreSQL and SQLite, by default "
        '(`stale_resume="keep"` keeps it)',
    ),
    "interrupt_rekeyed": (
        "a paused question's stored id rewritten in place to the id the LangGraph release "
        "named with `--interrupt-ids` computes for it; only the id's bytes change, the "
        "original kept for undo (see [upgrade LangGraph, or roll it back]"
        "(../how-to/resume-safely.md#upgrade-langgraph-or-roll-it-back))",
        "with `repair --interrupt-ids per-question|first` on PostgreSQL and SQLite, and on "
        "load with `PatchingCheckpointer(saver, interrupt_ids=...)`",
    ),
    "node_renamed": (
        "a head's next work moved off a node the graph renamed: its branch channel, "
        "pending Sends and open interrupt, re-keyed to the task and interrupt ids the new "
        "graph computes (see [deploy a new graph version](../how-to/deploy-a-new-graph.md))",
        "with `repair --graph SPEC --node-renamed OLD=NEW` (undoable), and on load with "
        "`PatchingCheckpointer(saver, renamed_nodes=...)`",
    ),
    "channel_dropped": (
        "a stored key the graph lacks, which would pause every resume, was dropped (its "
        "value kept in the run's record; undo puts it back)",
        "with `repair --graph SPEC`, on a graph with compiled interrupts",
    ),
    "delta_value_diverged": (
        "a delta channel's stored seed (or, below a fork, the head's read) is not what its "
        "parent's value and the writes that built it give through the reducer; the head "
        "gets the proven value (see [a "
        "history that went wrong](../how-to/deep-agents.md#a-history-that-went-wrong-and-"
        "was-committed))",
        "by the batch job (`scan`, `show`, `repair`, undoable), on every store it writes; "
        "a seed holding other messages than proven (a fork's) with `--prove-history`",
    ),
    "delta_seed_flattened": (
        "a delta channel's seed was stored as a list holding the list of messages, on "
        "which every resume raises; the head gets that list as a snapshot",
        "by the batch job (`scan`, `show`, `repair`, undoable), on every store it writes",
    ),
    "materialized": (
        "a delta channel's whole value, as the delta graph reads it, written into a new head "
        "as a plain value, so that a reader keeping the key as a plain channel reads every "
        "message (see [before a downgrade](../how-to/deep-agents.md#before-a-downgrade))",
        "by `materialize` (undoable), on PostgreSQL, SQLite and any saver",
    ),
    "message_id_stamped": (
        "a delta channel's stored write whose messages had no id, rewritten in place with "
        "each such message given an id derived from its row (the same on every read and "
        "after every repair), its original bytes kept for undo (see [messages without an "
        "id](../how-to/deep-agents.md#messages-without-an-id))",
        "by `repair` (undoable): in place on PostgreSQL and SQLite; elsewhere, and where a "
        "stored snapshot holds the messages, in an appended snapshot (`message_id_stamped:"
        "snapshot/N`)",
    ),
}


def action_kinds_page() -> str:
    kinds = typing.get_args(ActionKind)
    if set(kinds) != set(KINDS):
        raise LookupError(f"describe these action kinds: {set(kinds) ^ set(KINDS)}")
    rows = [f"| `{kind}` | {KINDS[kind][0]} | {KINDS[kind][1]} |" for kind in kinds]
    return "\n".join(
        [
            "# Action kinds and `scan --list` codes",
            "",
            "Generated from `ActionKind`. These names are **stable**: they are what "
            "`RepairAction.kind` holds, what the batch job records in its audit rows and "
            "checkpoint metadata, what `scan --list` prints as violation codes, and the "
            "`action` attribute of the OpenTelemetry counters.",
            "",
            "| Kind | What was done | Produced |",
            "| --- | --- | --- |",
            *rows,
            "",
            "`scan --list` prints one more code, `refused_type`, for a head left alone "
            "because its read refused a stored type (see "
            "[strict loading](../explanation/strict-loading.md)).",
            "",
            "## Integrity findings",
            "",
            "Generated from `FINDING_CODES`. What is wrong with a head's stored bytes "
            "rather than its history: `scan --list` prints these codes after the action "
            "kinds, `scan --json` lists each finding under the thread's `findings` "
            "(code, channel, task_id of a pending write, type, error, and the node a "
            "`node_missing` names) and counts heads "
            "by code under `findings`, and `show` prints one line each (see "
            "[threads that will not load](../how-to/unreadable-threads.md)).",
            "",
            "| Code | What was found | Where |",
            "| --- | --- | --- |",
            *finding_rows(),
            "",
        ]
    )


FINDINGS: dict[str, tuple[str, str]] = {
    "nul_text": (
        "text holding U+0000 that PostgreSQL refuses in its JSONB columns: the thread's "
        "next write fails, and so does every resume",
        "a pending write whose value is text, on PostgreSQL only",
    ),
    "lost_type": (
        "a stored type this environment cannot rebuild (its module is not found here, or "
        "an allowed type does not import): LangGraph would hand back plain data",
        "any channel value or pending write",
    ),
    "undecodable": (
        "bytes the saver's serializer cannot decode at all; the head's outcome is "
        "`unreadable` and the run goes on",
        "any channel value or pending write; on SQLite, the whole checkpoint",
    ),
    "foreign_format": (
        "a write would not keep to the formats of the thread's rows (a serializer type "
        "or version scheme the saver would not write, or a type unknown here); the "
        "head's outcome is `foreign_format` and nothing is written (see [the formats a "
        "thread keeps](../explanation/formats.md))",
        "the whole thread, when a repair, undo or rewind would write on it",
    ),
    "stale_resume": (
        "a human's answer (`Command(resume=...)`) already taken by a task, still stored as "
        "the null task's `__resume__` write while a question is open: the next "
        "`invoke(None)` hands it to that question (see [resume safely]"
        "(../how-to/resume-safely.md))",
        "a pending write of the null task, at a head waiting on a human",
    ),
    "interrupt_id_shared": (
        "a paused question whose id does not tell it apart from another question of its "
        "task: a later question stored with the task's first id (paused under LangGraph "
        "1.2.19 or earlier), or two questions raised at once with one id. An answer meant "
        "for the other one, retried by id, lands here, even in strict resume mode (see "
        "[resume safely](../how-to/resume-safely.md#upgrade-langgraph-or-roll-it-back))",
        "the `__interrupt__` write of a head waiting on a human; `scan --waiting` marks "
        "the question (`id_shared`)",
    ),
    "interrupt_id_mismatch": (
        "a paused question whose stored id is not the one the release named with "
        "`--interrupt-ids` computes: an answer by the id clients were shown does not "
        "reach it there (or, where the asking node cannot be told, its id cannot be "
        "checked). `repair --interrupt-ids` re-keys it, except two questions raised at "
        "once, which would share one id again",
        "the `__interrupt__` write of a head waiting on a human, with `--interrupt-ids`; "
        "`scan --interrupt-ids` exits 1",
    ),
    "node_missing": (
        "the head's next work (a pull task, an open interrupt, a pause before a node, "
        "pending Sends) names a node the graph given with `--graph` lacks: a resume ends "
        "the thread without running it. The finding's `node` names it, its `error` gives "
        "the question (see [deploy a new graph version](../how-to/deploy-a-new-graph.md))",
        "a head with next work, with `--graph`; `scan --graph` exits 1",
    ),
    "channel_missing": (
        "a stored key the graph lacks, on a graph with compiled interrupts: a resume never "
        "marks it as seen, so every resume pauses again",
        "a head with next work, with `--graph`; `scan --graph` exits 1",
    ),
    "drift_unchecked": (
        "a head `--graph` could not check: its bytes do not decode, so its next work "
        "cannot be read. `show TARGET --thread ID` names what does not decode; "
        "`repair --rewind-unreadable` gives the thread a readable head",
        "a head that does not decode, with `--graph`; `scan --graph` exits 1",
    ),
    "channel_ignored": (
        "a stored key holding a value that the graph lacks and that traps nothing: the new "
        "release neither reads nor writes it (a review kept under a removed key is "
        "forgotten). Reported only: it never closes the gate",
        "a head with next work, with `--graph`",
    ),
    "delta_seed_missing": (
        "a delta channel whose walk back from the head ends, with no snapshot, where rows "
        "were deleted (a prune that kept only the newest checkpoint): LangGraph rebuilds it "
        "from the writes left, so the thread forgets its history without an error. The "
        "head's outcome is `history_lost`; nothing is written on it",
        "a selected delta channel at a head, on PostgreSQL and SQLite",
    ),
    "blob_missing": (
        "the head names a version of the channel whose blob row is gone: LangGraph hands "
        "the channel back empty (recent releases first rebuild it from the checkpoints "
        "before the head, if any are left). The head's outcome is `history_lost`; nothing "
        "is written on it",
        "a selected channel stored in a blob, on PostgreSQL",
    ),
    "over_budget": (
        "a history over the policy's token budget that no trim makes fit (the task alone "
        "is larger, say): nothing is removed for it, `repair` writes nothing, and every "
        "look reports it, with its tokens and the budget, until it fits (see [threads too "
        "long for the model](../how-to/context-overflow.md))",
        "a selected message channel, with a token budget",
    ),
    "not_materialized": (
        "a delta head `materialize` leaves as it was, with why: a delta channel that does "
        "not hold messages and no `--graph` to lend its reducer, or a seed its rows prove "
        "wrong (`repair` it first)",
        "a delta channel, by `materialize`",
    ),
    "message_id_missing": (
        "a delta channel's history holds messages without an id (its writes stored a "
        "string, a (role, content) pair or a message with `id=None`): no `RemoveMessage` "
        "can name them, and a reducer that gives ids makes new ones on every read. "
        "`repair` stamps ids into the stored writes in place",
        "a selected delta message channel",
    ),
}


def finding_rows() -> list[str]:
    if set(FINDING_CODES) != set(FINDINGS):
        raise LookupError(f"describe these finding codes: {set(FINDING_CODES) ^ set(FINDINGS)}")
    return [f"| `{code}` | {FINDINGS[code][0]} | {FINDINGS[code][1]} |" for code in FINDING_CODES]


# Each variable the package reads; the build fails when one is no longer in its source.
VARIABLES: list[tuple[str, str, str]] = [
    (
        targets.TARGET_ENV,
        "every command; the Agent Server",
        "the store, as a TARGET; a TARGET on the command line wins",
    ),
    (
        strict.ALLOW_TYPES_ENV,
        "every command",
        "stored types to trust, `module:Name`, comma-separated (as `--allow-type`)",
    ),
    *(
        (
            name,
            "the Agent Server",
            "the store when `LANGGRAPH_REPAIR_TARGET` is not set (`:memory:`, which "
            "`langgraph dev` sets, means an in-memory saver)",
        )
        for name in server.TARGET_VARIABLES[1:]
    ),
    (
        "LANGGRAPH_REPAIR_POOL_SIZE",
        "the Agent Server",
        f"PostgreSQL connection pool size (default {server.DEFAULT_POOL_SIZE})",
    ),
    (
        "LANGGRAPH_REPAIR_POLICY",
        "the Agent Server",
        "`RepairPolicy` settings, comma-separated `KEY=VALUE`",
    ),
    (
        "LANGGRAPH_REPAIR_CHANNELS",
        "the Agent Server",
        "message channels to repair, comma-separated (default: every channel holding messages)",
    ),
    (
        "LANGGRAPH_REPAIR_MOVED_TYPES",
        "the Agent Server",
        "classes stored under an old name, comma-separated `old.module:Old=new.module:New`: "
        "loads build the new class (`moved_types`)",
    ),
]


def environment_page() -> str:
    source = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    rows = []
    for name, reader, meaning in VARIABLES:
        if name not in source:
            raise LookupError(f"{name} is no longer read by the package")
        rows.append(f"| `{name}` | {reader} | {meaning} |")
    return "\n".join(
        [
            "# Environment variables",
            "",
            "| Variable | Read by | Meaning |",
            "| --- | --- | --- |",
            *rows,
            "",
            "libpq's own variables and files work as they do for `psql`: `PGPASSWORD`, "
            "`PGPASSFILE`, `PGSERVICE`, `PGSERVICEFILE`, `PGHOST`, `PGUSER`. The test "
            "suite reads `TEST_POSTGRES_URI` (default "
            "`postgresql://postgres@127.0.0.1:5432/test`).",
            "",
        ]
    )


PAGES = {
    "reference/cli.md": cli_page,
    "reference/exit-codes.md": exit_codes_page,
    "reference/policy.md": policy_page,
    "reference/action-kinds.md": action_kinds_page,
    "reference/environment.md": environment_page,
}

for page, make in PAGES.items():
    with mkdocs_gen_files.open(page, "w") as out:
        out.write(make())
