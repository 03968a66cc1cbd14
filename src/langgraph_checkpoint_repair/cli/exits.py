"""The command's exit codes, and its two quiet endings: one error line, a closed stdout."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

from ..redact import scrub

EXIT_OK, EXIT_THREAD_FAILED, EXIT_USAGE, EXIT_SIGINT = 0, 1, 2, 130
EXIT_OUTPUT_CLOSED = 141
"""stdout's reader went away (`| head`): 128 + SIGPIPE, as a pipe's writer ends."""


def print_error(message: str) -> int:
    """One line on stderr, passwords masked; the usage exit code."""
    print(f"langgraph-repair: error: {scrub(message)}", file=sys.stderr)
    return EXIT_USAGE


def interrupted() -> int:
    """Ctrl-C outside a run's gentle stop (which ends its own way): one line, 130."""
    print("langgraph-repair: interrupted; run the command again to finish", file=sys.stderr)
    return EXIT_SIGINT


def output_closed(out: TextIO) -> int:
    """Whoever read stdout went away (`| head`): the command ends quietly, as a pipe's
    writer ends; stdout goes to the null device so that nothing more fails writing."""
    if out is sys.stdout:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    return EXIT_OUTPUT_CLOSED
