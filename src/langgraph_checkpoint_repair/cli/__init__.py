"""`langgraph-repair`: the batch job on the command line."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..batch import RunOptions, migrate, repair_threads, undo_run
from ..targets import TargetError, open_saver, parse_target
from .arguments import UsageError, parse, run_options
from .output import Progress, print_json, print_summary, print_threads, print_undo

EXIT_OK, EXIT_THREAD_FAILED, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; return the exit code (0 ok, 1 some thread failed, 2 usage/connection)."""
    out = out or sys.stdout
    try:
        args = parse(argv)
        logging.basicConfig(level=_log_level(args.verbose), stream=sys.stderr)
        parse_target(args.target)
        options = run_options(args) if args.command in ("scan", "repair") else None
        return _dispatch(args, options, out)
    except (UsageError, TargetError, ValueError) as error:
        print(f"langgraph-repair: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("langgraph-repair: interrupted; run the command again to finish", file=sys.stderr)
        return EXIT_THREAD_FAILED


def _dispatch(args: Any, options: RunOptions | None, out: TextIO) -> int:
    pool = options.concurrency + 1 if options else 2
    with open_saver(args.target, pool_size=pool, gentle=True) as saver:
        if args.command == "migrate":
            return _migrate(saver, args, out)
        if args.command == "undo":
            undo = undo_run(saver, args.run)
            print_json(undo.to_json(), out) if args.json else print_undo(undo, out)
            return EXIT_THREAD_FAILED if undo.errors else EXIT_OK
        assert options is not None
        progress = Progress()
        try:
            report = repair_threads(saver, options, command=args.command, on_progress=progress)
        finally:
            progress.close()
        if args.json:
            payload = report.to_json()
            if args.command == "scan":
                payload["threads"] = [vars(t) for t in report.threads]
            print_json(payload, out)
        else:
            print_threads(report, out)
            print_summary(report, out, "scan" if args.command == "scan" else "run")
        return EXIT_THREAD_FAILED if report.errors else EXIT_OK


def _migrate(saver: Any, args: Any, out: TextIO) -> int:
    applied = migrate(saver)
    if args.json:
        print_json({"applied": applied or [], "audit_tables": applied is not None}, out)
    elif applied is None:
        out.write("nothing to migrate: this store keeps its audit in checkpoint metadata\n")
    else:
        out.write(f"applied: {', '.join(applied)}\n" if applied else "up to date\n")
    return EXIT_OK


def _log_level(verbose: int) -> int:
    return logging.WARNING if not verbose else logging.INFO if verbose == 1 else logging.DEBUG
