"""`materialize` on the command line: a run of the batch job (`batch.materializing`)
that writes each delta thread's whole value into a new head as plain values, the step
before a downgrade; `undo --run` takes it back. It repairs nothing, so it takes none of
a repair's settings (they are set to their defaults here, for the run's options)."""

from __future__ import annotations

import argparse

from . import arguments as a


def materialize_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--dry-run", action="store_true", help="write nothing; report what a run would write"
    )
    a.selection(command)
    command.add_argument(
        "--channel", action="append", metavar="NAME",
        help="a message channel to read even where the head does not show it to be a "
        "delta channel (repeatable; default: messages)",
    )  # fmt: skip
    command.add_argument(
        "--graph", metavar="SPEC",
        help="the application's graph (file.py:attr, module:attr or langgraph.json:graph_id), "
        "whose reducers rebuild the delta channels that do not hold messages (a deep "
        "agent's files); without it such a thread is left as it was (not_materialized)",
    )  # fmt: skip
    a.add_rate(command, "materialize")
    command.set_defaults(policy=[], type_moved=[], interrupt_ids=None)
