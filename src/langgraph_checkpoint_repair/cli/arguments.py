"""The arguments of `langgraph-repair`: each command's (the parser is built from them in
`commands`), their values checked, flags -> RunOptions, errors -> one line.

They need nothing but the standard library: `--help` and `--version` end before any of
the package's work is loaded. What reads a parsed value (the policy, the run's checks,
the stored type names) is imported by the function that reads it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NoReturn

from ..codes import INTERRUPT_ID_SCHEMES
from ..targets.parse import TARGET_ENV
from .values import duration, positive, rate, shard

if TYPE_CHECKING:
    from ..batch import RunOptions
    from ..decoding.names import TypeName
    from ..engine import RepairPolicy

TARGET_HELP = (
    "postgresql://..., sqlite:///path, redis://..., or module:attr naming a saver factory "
    f"(default: ${TARGET_ENV}, which keeps a password off the command line)"
)


class UsageError(Exception):
    """A mistake on the command line; reported in one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_policy(settings: Sequence[str]) -> RepairPolicy:
    from ..engine.policy import policy_from_settings

    try:
        return policy_from_settings(settings)
    except ValueError as error:
        raise UsageError(str(error)) from None


EXIT_CODES = """exit codes:
  0    success
  1    some thread failed (listed under errors); scan --graph found one it would strand
       or could not check; scan --interrupt-ids found a question that release misses;
       undo left a thread it should have restored (stderr says why)
  2    usage or connection error (one line on stderr; nothing written)
  130  stopped by SIGINT (Ctrl-C): writes in flight finished, summary printed
  143  stopped by SIGTERM: the same; run the command again to finish
  141  stdout's reader went away (as with | head): the command ends quietly"""


JSON_LINE = "print one JSON object as the last line of stdout"


def add_common(command: argparse.ArgumentParser, json_help: str = JSON_LINE) -> None:
    """What every command takes: its TARGET, `--json`, `--verbose`, `--allow-type`."""
    command.add_argument("target", metavar="TARGET", nargs="?", help=TARGET_HELP)
    command.add_argument("--json", action="store_true", help=json_help)
    command.add_argument(
        "--verbose", "-v", action="count", default=0, help="log more (repeatable: -vv for debug)"
    )
    command.add_argument(
        "--allow-type", action="append", default=[], metavar="MODULE:NAME",
        help="also build this stored type (repeatable; also LANGGRAPH_REPAIR_ALLOW_TYPES, "
        "comma-separated); types other than LangGraph's and LangChain's own are read as "
        "plain data, and heads holding them are left alone",
    )  # fmt: skip


def scan_arguments(command: argparse.ArgumentParser) -> None:
    selection(command)
    _add_policy(command)
    command.add_argument(
        "--list", action="store_true",
        help="print one tab-separated line per broken head (thread, namespace, head "
        "checkpoint, violation codes) and nothing else, each page's lines as soon as "
        "the page is done, in the order the store gives the heads",
    )  # fmt: skip
    command.add_argument(
        "--waiting", action="store_true",
        help="list only the heads waiting on a human (an open interrupt) idle at least "
        "--min-idle: how long, the node that asked, the question (in the table, "
        "--list and --json); --json lists them anyway, beside the broken heads",
    )  # fmt: skip
    _repairs(command)


def repair_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--dry-run", action="store_true", help="write nothing; report what a run would do"
    )
    command.add_argument(
        "--rewind-unreadable", action="store_true",
        help="give a head that does not decode a new head copying its newest ancestor "
        "that does (action rewound; undo restores it); it forgets what the newer "
        "checkpoints held. PostgreSQL and SQLite only: elsewhere the head is reported",
    )  # fmt: skip
    selection(command)
    _add_policy(command)
    _repairs(command)


def undo_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--run", required=True, metavar="RUN_ID", help="the run to undo")
    command.add_argument(
        "--graph", metavar="SPEC",
        help="the graph the repair was given (as repair --graph takes it): imported first, "
        "so that the types its state declares load as in the application",
    )  # fmt: skip
    add_rate(command, "restore")


def show_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--thread", required=True, metavar="ID", help="the thread to show")
    command.add_argument("--ns", default="", metavar="NS", help="its namespace (default: the root)")
    command.add_argument(
        "--channel", default="messages", metavar="NAME", help="the message channel to show"
    )
    _add_policy(command)
    command.add_argument(
        "--graph", metavar="SPEC", help="also show what this graph would skip or trap in the "
        "thread (as scan --graph takes it)",
    )  # fmt: skip


def types_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--all-checkpoints", action="store_true",
        help="look at every checkpoint of every thread, not only the heads",
    )  # fmt: skip


def prune_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--keep-last", type=positive, default=1, metavar="N",
        help="keep the N newest checkpoints along each namespace's chain, with what they "
        "need (default 1: the head)",
    )  # fmt: skip
    command.add_argument(
        "--compact", action="store_true",
        help="delta threads: write each delta channel's snapshot under the head first "
        "(proven to rebuild the same values), so a namespace keeps at most two checkpoints",
    )  # fmt: skip
    command.add_argument(
        "--graph", metavar="SPEC",
        help="with --compact: the application's graph (file.py:attr, module:attr or "
        "langgraph.json:graph_id), whose reducers rebuild the delta channels that do not "
        "hold messages (a deep agent's files); without it such a thread is left as it was",
    )  # fmt: skip
    command.add_argument(
        "--dry-run", action="store_true", help="delete nothing; report what a run would delete"
    )
    command.add_argument(
        "--no-archive", action="store_true",
        help="keep no copy of what is deleted: the run cannot be undone",
    )  # fmt: skip
    _threads_and_idle(command, "leave threads written more recently than this to the "
                      "application")  # fmt: skip
    command.add_argument(
        "--limit", type=positive, metavar="N", help="prune at most N threads (a canary run)"
    )
    command.add_argument(
        "--delete-idle", type=duration, metavar="DURATION",
        help="also delete whole threads none of whose checkpoints was written within "
        "DURATION (30d, 12h), except those waiting on a human",
    )  # fmt: skip
    command.add_argument(
        "--include-waiting", action="store_true",
        help="with --delete-idle: delete idle threads waiting on a human too",
    )  # fmt: skip
    _shard_option(command, "")
    command.add_argument(
        "--vacuum", action="store_true",
        help="SQLite: give the freed pages back to the file system afterwards (VACUUM)",
    )  # fmt: skip
    command.add_argument(
        "--list", action="store_true", help="print each pruned thread's id, one per line"
    )


def forget_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--run", required=True, metavar="RUN_ID", help="the run to forget")


def no_arguments(command: argparse.ArgumentParser) -> None:
    """A command that takes only what every command takes (`migrate`)."""


def _threads_and_idle(command: argparse.ArgumentParser, idle: str) -> None:
    """`--thread` and `--min-idle`, whose help says what happens to a recent thread."""
    command.add_argument(
        "--thread", action="append", metavar="ID", help="only this thread (repeatable)"
    )
    command.add_argument(
        "--min-idle",
        type=duration,
        default=timedelta(minutes=10),
        metavar="DURATION",
        help=f"{idle}: 90s, 10m, 2h, 1d (default 10m; 0 for none)",
    )


def _shard_option(command: argparse.ArgumentParser, how: str) -> None:
    """`--shard K/N`; `how` says how the threads are split, where it matters."""
    command.add_argument(
        "--shard", type=shard, metavar="K/N",
        help=f"only part K of N (0 <= K < N): N runs, one per part, cover every thread once{how}",
    )  # fmt: skip


def selection(command: argparse.ArgumentParser) -> None:
    """Which heads a scan or repair looks at, and how many at once."""
    _threads_and_idle(command, "skip threads written more recently than this")
    _shard_option(
        command,
        " (PostgreSQL: ranges of thread ids; other stores: a stable hash of the thread id)",
    )
    command.add_argument(
        "--concurrency", type=positive, default=4, metavar="N",
        help="threads repaired at once (default 4)",
    )  # fmt: skip
    command.add_argument(
        "--limit", type=positive, metavar="N",
        help="repair at most N threads (a canary run); every broken thread is still counted",
    )  # fmt: skip


def _repairs(command: argparse.ArgumentParser) -> None:
    """What a scan or repair repairs, and how fast it writes."""
    command.add_argument(
        "--type-moved", action="append", default=[], metavar="OLD=NEW",
        help="a lost stored type whose class moved, as old.module:Old=new.module:New: its "
        "stored bytes are rewritten to name the new class (repeatable; nothing is built)",
    )  # fmt: skip
    command.add_argument(
        "--channel", action="append", metavar="NAME",
        help="a message channel to repair (repeatable; default: messages); "
        "a channel found in no scanned thread is reported",
    )  # fmt: skip
    _add_graph(command)
    command.add_argument(
        "--prove-history", action="store_true",
        help="prove every delta channel seed of each head from the rows before it, not "
        "only empty and flattened ones: finds a fork that committed another branch's "
        "messages (delta_value_diverged). Loads every head and reads its whole history",
    )  # fmt: skip
    command.add_argument(
        "--interrupt-ids", choices=INTERRUPT_ID_SCHEMES, metavar="per-question|first",
        help="how the LangGraph release that will resume the store makes interrupt ids: "
        "per-question (1.2.20 and later) or first (1.2.19 and earlier). A paused question "
        "whose stored id it does not compute is found (interrupt_id_mismatch; scan then "
        "exits 1) and re-keyed by repair (action interrupt_rekeyed)",
    )  # fmt: skip
    add_rate(command, "repair")


def _add_graph(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--graph", metavar="SPEC",
        help="the graph that will resume the threads, as file.py:attr, module:attr or "
        "langgraph.json:graph_id (a StateGraph, a compiled graph, or a function of no "
        "arguments returning one): heads whose next work it lacks are found "
        "(node_missing, channel_missing); LangGraph.js threads are not checked",
    )  # fmt: skip
    command.add_argument(
        "--node-renamed", action="append", default=[], metavar="OLD=NEW",
        help="a node the graph renamed (repeatable; needs --graph, NEW one of its nodes): "
        "a head whose work names OLD gets it moved to NEW (action node_renamed)",
    )  # fmt: skip
    command.add_argument(
        "--graph-id", metavar="ID",
        help="only threads whose checkpoint metadata names this graph_id (as the Agent "
        "Server tags them) or none are checked; the others are skipped (other_graph). "
        "Implied by --graph langgraph.json:ID",
    )  # fmt: skip


def add_rate(command: argparse.ArgumentParser, writes: str) -> None:
    command.add_argument(
        "--max-writes-per-second", type=rate, metavar="RATE",
        help=f"at most RATE {writes} writes per second (positive, e.g. 5 or 0.5; "
        "default: no limit)",
    )  # fmt: skip


def _add_policy(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--policy", action="append", default=[], metavar="KEY=VALUE",
        help="a RepairPolicy setting, e.g. dangling=drop_call, language=zh, strict=false, "
        "provider=anthropic, media=downscale, max_result_chars=200000, "
        "model_profile='{\"image_inputs\": false}', max_input_tokens=200000, "
        "context_reserve=20000 (repeatable)",
    )  # fmt: skip


def run_options(args: argparse.Namespace, looks: bool) -> RunOptions:
    """The run's options; `looks`: the command only looks (scan), whatever `--dry-run`."""
    from ..batch import RunOptions

    return RunOptions(
        dry_run=looks or args.dry_run,
        channels=tuple(args.channel or ("messages",)),
        threads=tuple(args.thread) if args.thread else None,
        min_idle=args.min_idle,
        shard=args.shard,
        concurrency=args.concurrency,
        limit=args.limit,
        policy=args.repair_policy,
        max_writes_per_second=args.max_writes_per_second,
        max_reported_threads=reported_threads(args),
        moved_types=moved_types(args),
        rewind_unreadable=getattr(args, "rewind_unreadable", False),
        waiting=looks and (args.json or args.waiting),
        interrupt_ids=args.interrupt_ids,
        materialize=args.command == "materialize",
        prove_history=getattr(args, "prove_history", False),
        **graph_options(args),
    )


def graph_options(args: argparse.Namespace) -> dict[str, Any]:
    """`--graph` loaded and `--node-renamed` checked against it, before the store is
    opened: a mistake in either is one line (exit 2)."""
    renamed = dict(_renamed(text) for text in getattr(args, "node_renamed", ()))
    if getattr(args, "graph", None) is None:
        if renamed:
            raise UsageError("--node-renamed needs --graph: the graph the node was renamed in")
        if getattr(args, "graph_id", None) is not None:
            raise UsageError("--graph-id needs --graph: the graph whose threads it names")
        return {}
    from ..drift.loading import GraphSpecError, load_graph
    from ..drift.shape import checked_renames

    graph_id = _graph_id(args.graph, getattr(args, "graph_id", None))
    try:
        graph = load_graph(args.graph)
        found = {"graph": graph, "renamed_nodes": checked_renames(renamed, graph)}
    except (GraphSpecError, ValueError) as error:
        raise UsageError(str(error)) from None
    return {**found, "graph_id": graph_id} if graph_id is not None else found


def _graph_id(spec: str, given: str | None) -> str | None:
    """The graph id the run keeps to: `langgraph.json:ID` names it, `--graph-id` too; two
    that differ are a mistake."""
    where, _, named = spec.rpartition(":")
    implied = named if where.endswith(".json") and named else None
    if given is not None and not given.strip():
        raise UsageError("--graph-id: give the graph's id")
    if given is not None and implied is not None and given != implied:
        raise UsageError(f"--graph-id {given!r} names another graph than --graph {spec!r}")
    return given if given is not None else implied


def _renamed(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old.strip() or not new.strip():
        raise UsageError(f"--node-renamed {text!r}: give OLD=NEW, two node names")
    return old.strip(), new.strip()


def moved_types(args: argparse.Namespace) -> dict[TypeName, TypeName]:
    from ..decoding.rename import moved_from

    try:
        return moved_from(args.type_moved)
    except ValueError as error:
        raise UsageError(str(error)) from None


TABLE_ROWS = 50
"""Broken threads a table shows at most; `scan --list` and `scan --json` list every one."""


def reported_threads(args: argparse.Namespace) -> int:
    """How many broken heads the run keeps for its output: a table's worth, none for
    `--json` (`repair --json` prints counts; `scan --json`, like `scan --list`, writes each
    head as the run finds it), so that the command's memory does not grow with the store."""
    listed = args.json or getattr(args, "list", False)
    return 0 if listed else TABLE_ROWS


def allowed_types(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The stored types trusted besides LangGraph's and LangChain's own: `--allow-type`
    and `LANGGRAPH_REPAIR_ALLOW_TYPES`."""
    from ..decoding.strict import ALLOW_TYPES_ENV, allowed_from_env, parse_allowed

    try:
        return parse_allowed(args.allow_type) + allowed_from_env(os.environ.get(ALLOW_TYPES_ENV))
    except ValueError as error:
        raise UsageError(str(error)) from None


def trusted_with_graph(allowed: tuple[TypeName, ...], graph: Any) -> tuple[TypeName, ...]:
    """The trusted types, with those the `--graph`'s state declares (they load as in the
    application); the ones it adds are named on stderr."""
    added = sorted(set(getattr(graph, "state_types", ())) - set(allowed))
    if added:
        names = ", ".join(f"{module}:{name}" for module, name in added)
        print(
            f"langgraph-repair: trusted, as the graph's state declares them: {names}",
            file=sys.stderr,
        )
    return allowed + tuple(added)
