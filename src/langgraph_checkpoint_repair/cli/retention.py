"""`prune` and `forget` on the command line, and what `undo` prints for a prune run: the
batch functions called with the parsed arguments, their reports printed. The table of
commands names these functions, so what they need is imported when they run."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .exits import EXIT_OK

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from ..batch.pruning import PruneReport, PruneUndoReport
    from .jobs import Job

GIVE_BACK = (
    "the database keeps the freed space for new rows; to return it to the file system: "
    "VACUUM FULL on PostgreSQL (it locks the tables), VACUUM on SQLite"
)
SKIP_REASONS = {
    "recent": "written within --min-idle (left to the application)",
    "claimed": "another prune holds it",
    "changed": "the application changed it meanwhile (run again to finish)",
    "unreadable": "a checkpoint that does not decode",
    "delta_seed_missing": "a delta channel whose chain was already cut (left as it is)",
    "compact_unproven": "a snapshot that did not rebuild the head (taken back, left as it was)",
    "delta_chain": "its delta chains need every checkpoint it keeps: run with --compact to free "
    "{compactable:,} checkpoint(s)",
    "delta_not_compacted": "a delta channel --compact cannot snapshot here (one that does not "
    "hold messages, without the --graph whose reducer rebuilds it, or a LangGraph.js "
    "thread's): its chain is kept, and so is the thread",
    "built_on": "a later run's checkpoints need every checkpoint of the run: the thread is "
    "left as that run left it",
}


def prune(job: Job, saver: BaseCheckpointSaver[Any]) -> PruneReport:
    from ..batch.pruning import prune_threads

    with _progress(job) as progress:
        return prune_threads(saver, **_settings(job, progress))


async def aprune(job: Job, saver: BaseCheckpointSaver[Any]) -> PruneReport:
    from ..batch.pruning import aprune_threads

    with _progress(job) as progress:
        return await aprune_threads(saver, **_settings(job, progress))


def _progress(job: Job) -> AbstractContextManager[Callable[[Any], None] | None]:
    """A spinner on a terminal (Rich imported then), else nothing to draw."""
    if not job.progress_shown:
        return contextlib.nullcontext(None)
    from .progress import PruneProgress

    return PruneProgress("looking at" if job.args.dry_run else "pruning")


def _settings(job: Job, progress: Callable[[Any], None] | None) -> dict[str, Any]:
    args = job.args
    listing = _listing(job) if args.list else None
    counted = None if args.dry_run else counting(job)
    tellers = [tell for tell in (listing, progress, counted) if tell is not None]
    return {
        "keep_last": args.keep_last,
        "min_idle": args.min_idle,
        "dry_run": args.dry_run,
        "archive": not args.no_archive,
        "delete_idle": args.delete_idle,
        "include_waiting": args.include_waiting,
        "compact": args.compact,
        "graph": args.graph_shape,
        "threads": args.thread,
        "shard": args.shard,
        "vacuum": args.vacuum,
        "limit": args.limit,
        "stop": job.stop.event,
        "on_thread": _telling(tellers) if tellers else None,
    }


def _telling(tellers: list[Callable[[Any], None]]) -> Callable[[Any], None]:
    """One callback handing each thread's outcome to every one of `tellers`."""

    def tell(outcome: Any) -> None:
        for teller in tellers:
            teller(outcome)

    return tell


def counting(job: Job) -> Callable[[Any], None]:
    """Counts the threads pruned, for a failure mid-run (`Job.done_so_far`)."""

    def counted(outcome: Any) -> None:
        job.pruned += outcome.pruned

    return counted


def _listing(job: Job) -> Any:
    def listed(outcome: Any) -> None:
        if outcome.pruned:
            job.out.write(f"{outcome.thread_id}\n")

    return listed


def pruned(job: Job, report: PruneReport) -> int:
    from .output import print_json

    if job.args.json:
        print_json(report.to_json(), job.out)
    elif not job.args.list:
        print_prune(report, job.out)
    return job.exit_code(report.stopped, False)


def print_prune(report: PruneReport, out: Any) -> None:
    from .tables import print_table

    deleted = report.deleted
    freed = sum(deleted.bytes.values())
    rows = [
        ("run", report.run_id),
        ("dry run" if report.dry_run else "archive", archive_cell(report)),
        ("threads scanned", f"{report.threads_scanned:,}"),
        ("threads pruned", f"{report.threads_pruned:,}"),
        ("of them deleted whole", f"{report.threads_deleted:,}"),
        ("threads compacted", f"{report.threads_compacted:,}"),
        ("checkpoints deleted", f"{deleted.rows['checkpoints']:,}"),
        ("writes deleted", f"{deleted.rows['writes']:,}"),
        ("blobs deleted", f"{deleted.rows['blobs']:,}"),
        ("bytes freed", f"{freed:,}"),
    ]
    rows += [(f"skipped: {reason}", f"{n:,}") for reason, n in sorted(report.skipped.items())]
    if report.stopped:
        rows.append(("stopped", "yes: run the command again to finish"))
    print_table(rows, out)
    for reason in sorted(report.skipped):
        said = SKIP_REASONS.get(reason, reason).format(compactable=report.compactable)
        out.write(f"skipped {reason}: {said}\n")
    if report.vacuumed:
        out.write("the file was rewritten without its free pages (VACUUM)\n")
    elif freed and not report.dry_run:
        out.write(f"{GIVE_BACK}\n")


def archive_cell(report: PruneReport) -> str:
    if report.dry_run:
        return "yes: nothing deleted"
    if not report.threads_pruned:
        return "nothing deleted"
    if report.archived:
        return f"kept: undo with --run {report.run_id}; drop it with forget --run"
    return "none (--no-archive): this run cannot be undone"


def print_prune_undo(job: Job, report: PruneUndoReport) -> int:
    from .output import print_json
    from .tables import print_table

    if job.args.json:
        print_json(report.to_json(), job.out)
        return EXIT_OK
    restored = report.restored.rows
    rows = [
        ("undoing", report.run_id),
        ("threads restored", f"{report.threads_restored:,}"),
        *((f"{table} restored", f"{n:,}") for table, n in restored.items() if n),
    ]
    print_table(rows, job.out)
    return EXIT_OK


def forget(job: Job, saver: BaseCheckpointSaver[Any]) -> int:
    from ..batch.pruning import forget_run

    return forget_run(saver, job.args.run)


async def aforget(job: Job, saver: BaseCheckpointSaver[Any]) -> int:
    from ..batch.pruning import aforget_run

    return await aforget_run(saver, job.args.run)


def forgot(job: Job, dropped: int) -> int:
    from .output import print_json

    if job.args.json:
        print_json({"run_id": job.args.run, "archived_rows_dropped": dropped}, job.out)
    else:
        job.out.write(
            f"dropped the archive of {job.args.run} ({dropped:,} rows): it can no longer "
            "be undone\n"
        )
    if not dropped:
        print(f"langgraph-repair: {job.args.run} had no archive left", file=sys.stderr)
    return EXIT_OK
