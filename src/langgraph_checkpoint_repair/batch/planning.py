"""What a run writes on a judged head, or why it writes nothing now: a repair
checkpoint, a rewind, pending writes changed in place, each checked against
`--dry-run`, `--limit`, `--min-idle` and the formats of the thread's rows. The
runner's planning, apart from bookkeeping and judging; the shells do the writes."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ..decisions.formats import format_finding
from ..decisions.id_stamps import ChainRow, id_stamps
from ..decisions.plan import (
    DETAIL_KEY,
    Assessment,
    NewCheckpoint,
    Status,
    checkpoint_on_top,
    repair_detail,
    tuple_key,
    written_after,
)
from ..decisions.rewind import AncestorWalk, left_unreadable, rewind_assessment, rewind_checkpoint
from ..decisions.rewrites import (
    InPlaceChanges,
    RewritePlan,
    interrupt_rekeys,
    joined,
    nul_rewrites,
    repair_changes,
    stale_answer_drop,
)
from ..decoding.integrity import StoredValue
from ..delta.channels import Rebuilt
from ..delta.proof import Proof
from ..drift.retarget import GRAPH_CHANNEL
from ..drift.writing import DriftFix, drift_fix, node_triggers, not_moved, retarget_on_top
from ..engine.actions import RepairAction
from ..stale_answers import RESUME_CHANNEL
from ..stores import Head
from .ancestors import Loaded
from .ledger import Ledger
from .materializing import materialize_assessment
from .options import Decision, RunOptions, outcome_before_writing

logger = logging.getLogger("langgraph_checkpoint_repair.batch")
ANSWER_LEFT = RepairAction("resume_dropped", None, None, 0, "left behind by the re-targeting")
"""A stale answer a checkpoint moving the head's work does not carry (undo puts it back)."""


class Planner:
    """Plans the writes of one run over `store` (sync or async: it does no I/O)."""

    def __init__(self, store: Any, options: RunOptions, ledger: Ledger) -> None:
        self.store = store
        self.options = options
        self.report = ledger.report
        self.quota = ledger.quota

    @property
    def changes(self) -> InPlaceChanges:
        """What the run may do to pending-write rows (the privileges it is checked for)."""
        o = self.options
        return repair_changes(o.policy.stale_resume, moves_work=o.graph is not None)

    @property
    def rewinding(self) -> bool:
        """Whether unreadable heads are rewound: asked for, and the store can undo it."""
        return self.options.rewind_unreadable and self.store.rewinds

    def leave_unreadable(self, assessment: Assessment) -> None:
        self.report.record(assessment, "unreadable")

    def rewind(
        self,
        found: Assessment,
        walk: AncestorWalk,
        loaded: Loaded | None,
        types: frozenset[str] | None,
    ) -> tuple[Assessment, NewCheckpoint] | None:
        """The rewind of an unreadable head to the ancestor the walk found; None (the
        head recorded, with why) when there is none or no write is due now. The rewind
        is written in the ancestor's format (`format_checked`, the thread's `types`)."""
        if loaded is None:
            self.leave_unreadable(left_unreadable(found, walk))
            return None
        ancestor, rebuilt = loaded
        assessment = rewind_assessment(found, walk, tuple_key(ancestor)[2])
        if assessment.status == "repair":
            assessment = self.format_checked(ancestor, assessment, types)
        if not self.due(assessment):
            return None
        saver, run_id = self.store.saver, self.options.run_id
        return assessment, rewind_checkpoint(
            walk, ancestor, saver.get_next_version, run_id, rebuilt
        )

    def format_checked(
        self, stored: CheckpointTuple, assessment: Assessment, types: frozenset[str] | None
    ) -> Assessment:
        """The assessment of a head to write on, left alone as `foreign_format` (with why,
        as a finding) where the write would not keep to the formats of the thread's
        rows, whose serializer types are `types` (None: a saver that shows no rows)."""
        finding = format_finding(self.store.saver, stored.checkpoint, types)
        if finding is None:
            return assessment
        logger.info("foreign_format thread=%r ns=%r: %s", *tuple_key(stored)[:2], finding.error)
        findings = (*assessment.findings, finding)
        return replace(assessment, status="foreign_format", findings=findings)

    def due(self, assessment: Assessment) -> bool:
        """Whether a write is due on the head now; if not, it is recorded with why."""
        outcome = outcome_before_writing(assessment, self.options.dry_run)
        if outcome is None:
            if assessment.findings:
                self.report.record(assessment, "reported")
            return False
        if outcome in ("repair", "would_repair") and not self.quota.take():
            outcome = "limit"  # over --limit: counted, left for the next run
        if outcome != "repair":
            self.report.record(assessment, outcome)
            return False
        return True

    def write(self, tup: CheckpointTuple, assessment: Assessment) -> NewCheckpoint | None:
        """The repair checkpoint to write on `tup` (as stored), or None when the head
        needs no write now."""
        if not self.due(assessment):
            return None
        detail = repair_detail(assessment)
        saver, run_id = self.store.saver, self.options.run_id
        new = checkpoint_on_top(
            tup, assessment.repaired, saver.get_next_version, detail, run_id, assessment.snapshots
        )
        kept = {k: v for k, v in assessment.stored_as_is.items() if k not in assessment.repaired}
        new.checkpoint["channel_values"].update(kept)  # as stored, not as read
        return new

    def materialized(
        self, stored: CheckpointTuple, loaded: Rebuilt, proven: Mapping[str, Proof]
    ) -> Assessment:
        """What `materialize` writes on the head (`batch.materializing`)."""
        o = self.options
        return materialize_assessment(stored, loaded, proven, o.graph_shape, o.idle, o.started)

    def drift_fix(self, assessment: Assessment) -> DriftFix | None:
        """The renames and drops that answer the head's drift findings; None when it has
        none, or one the operator gave no answer for (it is then reported as found)."""
        o = self.options
        if o.graph_shape is None:
            return None
        return drift_fix(assessment.findings, o.renamed_nodes, assessment.checkpoint_ns)

    def retarget(
        self,
        tup: CheckpointTuple,
        assessment: Assessment,
        fix: DriftFix,
        types: frozenset[str] | None,
    ) -> tuple[Assessment, NewCheckpoint] | None:
        """The checkpoint moving the head's work off the nodes the graph renamed and
        dropping the channels it lacks that trap its interrupts (`fix`), checked against
        the formats of the thread's rows (`types`); None when no write is due (the head
        is recorded, with why)."""
        o, saver = self.options, self.store.saver
        triggers = node_triggers(o.graph_shape, assessment.checkpoint_ns)
        stale = o.policy.stale_resume == "drop" and any(
            finding.code == "stale_resume" for finding in assessment.findings
        )
        made = retarget_on_top(
            tup, fix, triggers, saver.get_next_version, {"kind": "repair"}, o.run_id, stale
        )
        if isinstance(made, str):
            logger.info("not re-targeted thread=%r ns=%r: %s", *tuple_key(tup)[:2], made)
            self.due(replace(assessment, findings=not_moved(assessment.findings, made)))
            return None
        new, moved = made
        actions = {GRAPH_CHANNEL: moved, **({RESUME_CHANNEL: (ANSWER_LEFT,)} if stale else {})}
        recent = written_after(tup.checkpoint.get("ts"), o.started - o.idle)
        status: Status = "recent" if recent else "repair"
        assessment = replace(assessment, status=status, actions=actions)
        new.metadata[DETAIL_KEY].update(repair_detail(assessment))
        if status == "repair":
            assessment = self.format_checked(tup, assessment, types)
        return (assessment, new) if self.due(assessment) else None

    def rewrite(
        self,
        key: tuple[str, str, str],
        values: Sequence[StoredValue] | None,
        assessment: Assessment,
        rekeys: Mapping[str, tuple[str, str]] | None = None,
        chain: Sequence[ChainRow] = (),
    ) -> RewritePlan | None:
        """The head's pending writes to change in place, where the store can: text
        holding U+0000 where the store refuses it (`docs/how-to/unreadable-threads.md`),
        else a stale answer to delete (`docs/how-to/resume-safely.md`), the questions
        `--interrupt-ids` re-keys (`rekeys`, by task: stored and computed id) and the
        writes of its chain whose messages have no id (`chain`, `decisions.id_stamps`),
        in one plan; None when there is none."""
        if not self.store.rewrites_writes:
            return None
        serde = self.store.saver.serde
        stamps = id_stamps(key, chain, serde) if chain else None
        if values is None:
            return stamps
        codes = {finding.code for finding in assessment.findings}
        if "nul_text" in codes and self.store.nul_matters:
            return nul_rewrites(key, values, serde, self.options.policy.nul_text)
        drop = "stale_resume" in codes and self.options.policy.stale_resume == "drop"
        return joined(
            [
                stale_answer_drop(key, values) if drop else None,
                interrupt_rekeys(key, values, rekeys) if rekeys else None,
                stamps,
            ]
        )

    def seen_stale(self, assessment: Assessment, head: Head) -> RewritePlan | None:
        """The deletion of a stale answer the first look proved (`Judge.stale_by_look`);
        None when the policy keeps it (the head recorded as reported)."""
        plan = self.rewrite(head.key, head.writes, assessment)
        if plan is None:
            self.due(assessment)
        return plan

    def rewrite_outcome(self, written: Any) -> Decision:
        """`repair`, or what the rewrite of a head written at `written` (its time) is
        instead: `recent` (within --min-idle), `would_repair` (a dry run), `limit`
        (over --limit)."""
        o = self.options
        if written_after(written, o.started - o.idle):
            return "recent"
        if not self.quota.take():
            return "limit"
        return "would_repair" if o.dry_run else "repair"
