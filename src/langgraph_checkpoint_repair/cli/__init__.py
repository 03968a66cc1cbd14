"""`langgraph-repair`: the batch job on the command line.

Only the arguments are parsed here: `--help`, `--version` and a mistyped option import
nothing of LangGraph or LangChain. The command's own work (`running`) is imported once
the arguments parse, and each store's driver only when its store is opened.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from .arguments import UsageError
from .commands import parse
from .exits import interrupted, output_closed, print_error


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; return the exit code (0 ok, 1 some thread failed,
    2 usage/connection, 128 + N when stopped by signal N, 141 when stdout was closed)."""
    out = out or sys.stdout
    try:
        args = parse(argv)
        from .running import run  # the command's work: imported once its arguments parse
    except UsageError as error:
        return print_error(str(error))
    except BrokenPipeError:  # `--help | head`
        return output_closed(out)
    except KeyboardInterrupt:  # Ctrl-C while the command loads
        return interrupted()
    return run(args, out)
