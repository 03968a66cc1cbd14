"""`langgraph-repair`: the batch job on the command line."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..batch import StoreLost
from ..decoding.strict import quiet_langgraph_notices
from ..stores import StoreNotReady
from ..targets import AsyncFactory, TargetError, parse_target
from ..targets.redact import RedactingFilter, scrub
from .arguments import UsageError, allowed_types, parse, run_options
from .jobs import EXIT_OUTPUT_CLOSED, EXIT_SIGINT, EXIT_THREAD_FAILED, EXIT_USAGE, Job
from .stopping import StopRequest, stop_on_signals


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; return the exit code (0 ok, 1 some thread failed,
    2 usage/connection, 128 + N when stopped by signal N, 141 when stdout was closed)."""
    out = out or sys.stdout
    job: Job | None = None
    try:
        args = parse(argv)
        logging.basicConfig(level=_log_level(args.verbose), stream=sys.stderr)
        for handler in logging.getLogger().handlers:
            handler.addFilter(RedactingFilter())
        quiet_langgraph_notices()
        if not args.verbose:
            # The pool's failed attempts to connect are retried; a store that stays
            # gone ends the run with one line of ours, so they are not the operator's.
            logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
        parse_target(args.target)
        args.allowed_types = allowed_types(args)
        options = run_options(args) if args.command in ("scan", "repair") else None
        # scan, repair and undo stop gently on a signal; migrate keeps the defaults
        gentle = options is not None or args.command == "undo"
        signals = stop_on_signals() if gentle else contextlib.nullcontext(StopRequest())
        with signals as stop:
            job = Job(args, options, out, stop)
            return _open_and_run(job)
    except BrokenPipeError:
        return _output_closed(out)
    except (UsageError, TargetError, StoreNotReady) as error:
        return _error(str(error), job)
    except StoreLost as error:
        return _lost(error, job)
    except ValueError as error:  # a bad value, unless the run had already written
        return _store_failure(error, job) if job and job.written else _error(str(error), job)
    except KeyboardInterrupt:
        _end_stream(job)
        print("langgraph-repair: interrupted; run the command again to finish", file=sys.stderr)
        return EXIT_SIGINT
    except Exception as error:  # the store failed as a whole (locked, no permission, ...)
        return _store_failure(error, job)


def _open_and_run(job: Job) -> int:
    try:
        return job.open_and_run()
    except AsyncFactory:  # raised before anything was opened: open it the async way
        return asyncio.run(job.aopen_and_run())


def _error(message: str, job: Job | None = None) -> int:
    _end_stream(job)
    print(f"langgraph-repair: error: {scrub(message)}", file=sys.stderr)
    return EXIT_USAGE


def _end_stream(job: Job | None) -> None:
    """What `scan --list` or `scan --json` wrote before a failure ends as documented."""
    if job is not None:
        job.end_stream()


def _output_closed(out: TextIO) -> int:
    """Whoever read stdout went away (`| head`): the command ends quietly, as a pipe's
    writer ends; stdout goes to the null device so that nothing more fails writing."""
    if out is sys.stdout:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    return EXIT_OUTPUT_CLOSED


STORE_HINTS = {
    "LockNotAvailable": "a table is locked by another session (gave up waiting)",
    "InsufficientPrivilege": "the database role lacks a privilege",
    "QueryCanceled": "a statement ran too long (statement_timeout)",
}


def _store_failure(error: Exception, job: Job | None) -> int:
    """One line naming what failed; exit 1 when some repairs were already written."""
    kind = type(error).__name__
    text = scrub(_server_message(error) or kind)
    hint = STORE_HINTS.get(kind, kind)
    done = job.written if job is not None else 0
    if job is not None and job.report is not None and done:
        job.print_report(job.report)  # what the run did before the store failed
        print(
            f"langgraph-repair: error: {hint}: {text} (after {done} repairs; "
            "run the command again to finish)",
            file=sys.stderr,
        )
        return EXIT_THREAD_FAILED
    return _error(f"{hint}: {text}", job)


def _server_message(error: Exception) -> str:
    """The server's own message where the driver has it, else the error's first line.
    libpq ends its text with ` at character N` when it lacks the statement's text (a
    prepared statement planned again), which says nothing to an operator."""
    primary = getattr(getattr(error, "diag", None), "message_primary", None)
    text = primary if isinstance(primary, str) and primary.strip() else str(error)
    return text.strip().splitlines()[0] if text.strip() else ""


def _lost(error: StoreLost, job: Job | None) -> int:
    """The store went away mid-run: the summary so far, one line; exit 1 after writes."""
    done = 0
    if job is not None:
        job.report = error.report
        done = job.written
        job.print_report(error.report)
    after = f" (after {done} repairs; run the command again to finish)" if done else ""
    print(f"langgraph-repair: error: lost the database: {error}{after}", file=sys.stderr)
    return EXIT_THREAD_FAILED if done else EXIT_USAGE


def _log_level(verbose: int) -> int:
    return logging.WARNING if not verbose else logging.INFO if verbose == 1 else logging.DEBUG
