"""A parsed command, run: its store opened as it must be, its work done, every failure
turned into one line and an exit code. Imported only once the arguments parse, so
`--help`, `--version` and a mistyped option never load a store's driver."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from typing import TextIO

from .. import metrics
from ..batch import StoreLost
from ..decoding.strict import quiet_langgraph_notices
from ..redact import RedactingFilter, one_line
from ..stores import StoreNotReady
from ..stores.faults import named_cause, watch_connection_failures
from ..targets import AsyncFactory, TargetError, parse_target
from .arguments import (
    UsageError,
    allowed_types,
    graph_options,
    run_options,
    trusted_with_graph,
)
from .commands import COMMANDS
from .exits import EXIT_THREAD_FAILED, EXIT_USAGE, interrupted, output_closed, print_error
from .jobs import Job
from .stopping import StopRequest, stop_on_signals


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run one parsed command; return its exit code."""
    job: Job | None = None
    try:
        logging.basicConfig(level=_log_level(args.verbose), stream=sys.stderr)
        for handler in logging.getLogger().handlers:
            handler.addFilter(RedactingFilter())
        quiet_langgraph_notices()
        metrics.record_only_if_exported()
        # The pool's failed attempts to connect are retried; a store that stays gone
        # ends the run with one line of ours naming the last of them.
        watch_connection_failures(shown=bool(args.verbose))
        parse_target(args.target)
        args.allowed_types = allowed_types(args)
        entry = COMMANDS[args.command]
        options = run_options(args, entry.looks) if entry.runs else None
        args.graph_shape = options.graph if options else graph_options(args).get("graph")
        args.allowed_types = trusted_with_graph(args.allowed_types, args.graph_shape)
        signals = stop_on_signals() if entry.gentle else contextlib.nullcontext(StopRequest())
        with signals as stop:
            job = Job(args, options, out, stop)
            return _open_and_run(job)
    except BrokenPipeError:
        return output_closed(out)
    except (UsageError, TargetError, StoreNotReady) as error:
        return _error(str(error), job)
    except StoreLost as error:
        return _lost(error, job)
    except ValueError as error:  # a bad value, unless the run had already written
        done = job is not None and job.done_so_far is not None
        return _store_failure(error, job) if done else _error(str(error), job)
    except KeyboardInterrupt:
        _end_stream(job)
        return interrupted()
    except Exception as error:  # the store failed as a whole (locked, no permission, ...)
        return _store_failure(error, job)


def _open_and_run(job: Job) -> int:
    try:
        return job.open_and_run()
    except AsyncFactory:  # raised before anything was opened: open it the async way
        return asyncio.run(job.aopen_and_run())


def _error(message: str, job: Job | None = None) -> int:
    _end_stream(job)
    return print_error(message)


def _end_stream(job: Job | None) -> None:
    """What `scan --list` or `scan --json` wrote before a failure ends as documented."""
    if job is not None:
        job.end_stream()


SESSION_HINTS = {
    "LockNotAvailable": "a table is locked by another session (gave up waiting)",
    "InsufficientPrivilege": "the database role lacks a privilege",
    "QueryCanceled": "a statement ran too long (statement_timeout)",
}
"""A statement failed, not the store: the database is there."""
STORE_HINTS = {**SESSION_HINTS, "PoolTimeout": "no connection to the database"}
CANNOT_CONNECT = "cannot connect to PostgreSQL"
"""What a pool's connection attempt met, when it is none of the kinds above."""


def _reason(error: BaseException) -> str:
    """The hint and the server's words; a pool that gave up waiting is named by what its
    connections met (a statement timeout, a refused login), when it met anything."""
    cause = named_cause(error)
    kind = type(cause).__name__
    hint = STORE_HINTS.get(kind, CANNOT_CONNECT if cause is not error else kind)
    return f"{hint}: {one_line(cause)}"


def _store_failure(error: Exception, job: Job | None) -> int:
    """One line naming what failed; exit 1 when the run had already written."""
    reason = _reason(error)
    done = job.done_so_far if job is not None else None
    if job is not None and done is not None:
        if job.report is not None:
            job.print_report(job.report)  # what the run did before the store failed
        print(
            f"langgraph-repair: error: {reason} (after {done}; run the command again to finish)",
            file=sys.stderr,
        )
        return EXIT_THREAD_FAILED
    return _error(reason, job)


def _lost(error: StoreLost, job: Job | None) -> int:
    """The store went away mid-run: the summary so far, one line; exit 1 after writes.
    A pool that gave up waiting names what its sessions met, or that it met nothing."""
    done = None
    if job is not None:
        job.report = error.report
        done = job.done_so_far
        job.print_report(error.report)
    after = f" (after {done}; run the command again to finish)" if done else ""
    cause = named_cause(error.__cause__ or error)
    lost = type(cause).__name__ not in STORE_HINTS
    reason = f"lost the database: {error}" if lost else _reason(cause)
    print(f"langgraph-repair: error: {reason}{after}", file=sys.stderr)
    return EXIT_THREAD_FAILED if done else EXIT_USAGE


def _log_level(verbose: int) -> int:
    return logging.WARNING if not verbose else logging.INFO if verbose == 1 else logging.DEBUG
