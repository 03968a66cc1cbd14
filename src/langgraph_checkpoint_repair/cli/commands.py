"""The commands of `langgraph-repair`, one entry each: what `--help` says of it, its
example, its own arguments, how it treats the store, and the batch functions it runs
with what prints their result. The parser is built from this table, and the run reads
its command's entry: a new command is one entry here, and nothing else names one.

Nothing here imports the batch job: an entry's functions reach it through the `Job`
they are given, once the arguments have parsed (`--help` stays light).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from ..targets.parse import TARGET_ENV
from . import arguments as a
from . import retention, rollback
from .arguments import EXIT_CODES, JSON_LINE, Parser, UsageError
from .materialize import materialize_arguments

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from .jobs import Job


@dataclass(frozen=True)
class Entry:
    """One command of the table."""

    summary: str
    """Its line in the main `--help`, and (capitalised) its own description."""
    example: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    """Its own arguments, after those every command takes (`arguments.add_common`)."""
    call: Callable[[Job, BaseCheckpointSaver[Any]], Any]
    """Its batch function through a saver's sync API."""
    acall: Callable[[Job, BaseCheckpointSaver[Any]], Awaitable[Any]]
    """The same through the async API."""
    present: Callable[[Job, Any], int]
    """Prints the result; the exit code back."""
    looks: bool = False
    """It only looks: the store is opened so that nothing can change it (a `repair`
    looks too when it is a dry run)."""
    runs: bool = False
    """A run over the store's heads (`scan`, `repair`): run options, a progress bar, its
    signals stop it gently."""
    gentle: bool = False
    """A signal stops it gently: writes in flight finish and the summary is printed."""
    streams: bool = False
    """With `--list` or `--json` it writes each head as the run finds it (`scan`)."""
    json_help: str = JSON_LINE
    writes: str = "repair"
    """What a run of it writes, as its summary says (`cli.output.WRITES`)."""

    @property
    def title(self) -> str:
        """What its summary table calls it."""
        return "scan" if self.looks else "run"


async def _no_async_migrate(job: Job, saver: BaseCheckpointSaver[Any]) -> None:
    raise UsageError("migrate needs a postgresql:// target or a sync saver")


COMMANDS: dict[str, Entry] = {
    "scan": Entry(
        "list broken threads; write nothing",
        "langgraph-repair scan postgresql://app@db/agents --min-idle 30m",
        a.scan_arguments,
        lambda job, saver: job.repair(saver),
        lambda job, saver: job.arepair(saver),
        lambda job, report: job.finished(report),
        looks=True,
        runs=True,
        gentle=True,
        streams=True,
        json_help=f"{JSON_LINE}, written as the run goes: its threads list first, each broken "
        "head once its page is done, then the summary's fields (a run stopped short still "
        'ends it, with "stopped": true)',
    ),
    "repair": Entry(
        "append a repair checkpoint to each broken thread",
        "langgraph-repair repair sqlite:///threads.sqlite --dry-run --json",
        a.repair_arguments,
        lambda job, saver: job.repair(saver),
        lambda job, saver: job.arepair(saver),
        lambda job, report: job.finished(report),
        runs=True,
        gentle=True,
    ),
    "materialize": Entry(
        "write each delta thread's whole value into a new head as plain values, for a "
        "reader without delta channels (the step before a downgrade; undo takes it back)",
        "langgraph-repair materialize postgresql://app@db/agents --min-idle 1h --dry-run",
        materialize_arguments,
        lambda job, saver: job.repair(saver),
        lambda job, saver: job.arepair(saver),
        lambda job, report: job.finished(report),
        runs=True,
        gentle=True,
        writes="materialize",
    ),
    "undo": Entry(
        "restore the threads a run repaired (append-only), or the rows a prune or a rollback "
        "deleted",
        "langgraph-repair undo postgresql://app@db/agents --run run-1f0c2a9e4b7d",
        a.undo_arguments,
        lambda job, saver: job.undo(saver),
        lambda job, saver: job.aundo(saver),
        lambda job, report: job.undone(report),
        gentle=True,
    ),
    "prune": Entry(
        "delete the checkpoints no thread needs any more (archived for undo)",
        "langgraph-repair prune postgresql://app@db/agents --keep-last 3 --dry-run",
        a.prune_arguments,
        retention.prune,
        retention.aprune,
        retention.pruned,
        gentle=True,
    ),
    "forget": Entry(
        "drop a prune's or a rollback's archive: that run can no longer be undone",
        "langgraph-repair forget postgresql://app@db/agents --run run-1f0c2a9e4b7d",
        a.forget_arguments,
        retention.forget,
        retention.aforget,
        retention.forgot,
    ),
    "rollback": Entry(
        "take one run of the application back out of its threads (archived for undo)",
        "langgraph-repair rollback postgresql://app@db/agents --run 1f0c2a9e-... --dry-run",
        rollback.rollback_arguments,
        rollback.rollback,
        rollback.arollback,
        rollback.rolled_back,
        gentle=True,
    ),
    "migrate": Entry(
        "create or update the audit tables (PostgreSQL)",
        "langgraph-repair migrate postgresql://app@db/agents",
        a.no_arguments,
        lambda job, saver: job.migrate(saver),
        _no_async_migrate,
        lambda job, applied: job.migrated(applied),
    ),
    "show": Entry(
        "show one thread's messages before and after repair; write nothing",
        "langgraph-repair show sqlite:///threads.sqlite --thread 6f1c0e2a",
        a.show_arguments,
        lambda job, saver: job.show(saver),
        lambda job, saver: job.ashow(saver),
        lambda job, preview: job.shown(preview),
        looks=True,
    ),
    "types": Entry(
        "list the types stored threads name and the allowed_msgpack_modules they need; "
        "write nothing",
        "langgraph-repair types postgresql://app@db/agents --all-checkpoints",
        a.types_arguments,
        lambda job, saver: job.types(saver),
        lambda job, saver: job.atypes(saver),
        lambda job, inventory: job.listed(inventory),
        looks=True,
    ),
}


def parser() -> Parser:
    """The command line's parser, every command's from its entry."""
    root = Parser(
        prog="langgraph-repair",
        description="Repair, check and prune LangGraph thread stores: broken tool-call "
        "histories, threads a deploy would strand, and checkpoints no thread needs.",
        epilog="examples:\n"
        + "\n".join(f"  {entry.example}" for entry in COMMANDS.values())
        + f"\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument(
        "--version", action="version", version=f"%(prog)s {version('langgraph-checkpoint-repair')}"
    )
    commands = root.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, entry in COMMANDS.items():
        command: argparse.ArgumentParser = commands.add_parser(
            name,
            help=entry.summary,
            description=f"{entry.summary[0].upper()}{entry.summary[1:]}.",
            epilog=f"example:\n  {entry.example}\n\n{EXIT_CODES}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        a.add_common(command, entry.json_help)
        entry.add_arguments(command)
    return root


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, checked: a TARGET, and every value a run reads parsed once."""
    args = parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    if not args.target:
        args.target = os.environ.get(TARGET_ENV, "").strip()
    if not args.target:
        raise UsageError(f"no TARGET: give one, or set {TARGET_ENV}")
    if getattr(args, "include_waiting", False) and args.delete_idle is None:
        raise UsageError("--include-waiting goes with --delete-idle")
    if getattr(args, "compact", False) and args.keep_last > 1:
        raise UsageError("--compact keeps each head and one snapshot under it: no --keep-last")
    if getattr(args, "list", False) and args.json:
        raise UsageError("--list and --json are two ways to print the result: choose one")
    settings = getattr(args, "policy", None)
    # parsed once, here: a bad setting is refused before anything is opened
    args.repair_policy = None if settings is None else a.build_policy(settings)
    return args
