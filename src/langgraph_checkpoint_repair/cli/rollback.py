"""`rollback` on the command line: one run of the application taken back out of the
store (`batch.rollback`), archived, so that `undo --run` puts it back. The operator's
twin of the Agent Server's `multitask_strategy="rollback"`: a run a deploy got wrong,
a run cancelled on a server that did not roll it back."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .retention import counting

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from ..batch.pruning import PruneReport
    from .jobs import Job

BUILT_ON = (
    "{n:,} thread(s) kept checkpoints of the run that a later run's need (its delta "
    "chain, or its pending sends): they read as that later run left them"
)


def rollback_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--run", action="append", required=True, metavar="RUN_ID",
        help="the application's run to take back: the run id its checkpoints carry in their "
        "metadata (run_id), as the Agent Server sets it (repeatable)",
    )  # fmt: skip
    command.add_argument(
        "--thread", action="append", metavar="ID", help="only this thread (repeatable)"
    )
    command.add_argument(
        "--dry-run", action="store_true", help="delete nothing; report what a run would delete"
    )


def _settings(job: Job) -> dict[str, Any]:
    args = job.args
    return {
        "threads": args.thread,
        "dry_run": args.dry_run,
        "stop": job.stop.event,
        "on_thread": None if args.dry_run else counting(job),
    }


def rollback(job: Job, saver: BaseCheckpointSaver[Any]) -> PruneReport:
    from ..batch.rollback import rollback_runs

    return rollback_runs(saver, job.args.run, **_settings(job))


async def arollback(job: Job, saver: BaseCheckpointSaver[Any]) -> PruneReport:
    from ..batch.rollback import arollback_runs

    return await arollback_runs(saver, job.args.run, **_settings(job))


def rolled_back(job: Job, report: PruneReport) -> int:
    from .output import print_json

    if job.args.json:
        print_json(report.to_json(), job.out)
    else:
        print_rollback(report, job.out)
    return job.exit_code(report.stopped, False)


def print_rollback(report: PruneReport, out: Any) -> None:
    from .retention import SKIP_REASONS, archive_cell
    from .tables import print_table

    deleted = report.deleted.rows
    rows = [
        ("run", report.run_id),
        ("rolling back", ", ".join(report.rollback_of or ())),
        ("dry run" if report.dry_run else "archive", archive_cell(report)),
        ("threads holding the run", f"{report.threads_scanned:,}"),
        ("threads rolled back", f"{report.threads_pruned:,}"),
        ("checkpoints deleted", f"{deleted['checkpoints']:,}"),
        ("writes deleted", f"{deleted['writes']:,}"),
        ("blobs deleted", f"{deleted['blobs']:,}"),
    ]
    rows += [(f"skipped: {reason}", f"{n:,}") for reason, n in sorted(report.skipped.items())]
    if report.stopped:
        rows.append(("stopped", "yes: run the command again to finish"))
    print_table(rows, out)
    if report.threads_built_on:
        out.write(BUILT_ON.format(n=report.threads_built_on) + "\n")
    for reason in sorted(report.skipped):
        out.write(f"skipped {reason}: {SKIP_REASONS.get(reason, reason)}\n")
