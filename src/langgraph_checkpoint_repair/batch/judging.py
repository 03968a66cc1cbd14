"""What a loaded head is: its assessment from the tuple LangGraph hands back, its
findings from its stored bytes, or why it is left alone (a refused or lost type,
bytes that do not decode). The runner's judging, apart from bookkeeping and writing."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ..decisions.plan import Assessment, assess, bytes_status, tuple_key
from ..decisions.stored_bytes import findings_of, moved_types_repair, needs_inspection, unreadable
from ..decoding.integrity import Finding, StoredValue
from ..delta.proof import Proof
from ..drift.findings import drift_findings
from ..engine.media.history import history_limits
from ..interrupt_ids import id_findings, marked_shared, rekeys
from ..js.rows import is_js_checkpoint
from ..redact import one_line
from ..stale_answers import asks_a_human
from ..stores import Head
from ..waiting import waiting_head
from .ledger import Ledger
from .options import RunOptions
from .stale import STALE_FOUND, may_drop_answer

logger = logging.getLogger("langgraph_checkpoint_repair.batch")
UNDECODED = (
    "its bytes do not decode, so its next work cannot be read: `show TARGET --thread ID` "
    "names what does not decode, `repair --rewind-unreadable` gives it a readable head"
)
LOST_HISTORY = {
    "delta_seed_missing": "the checkpoints back to its last snapshot are gone: LangGraph "
    "rebuilds it from the writes left, so the thread forgets its history",
    "blob_missing": "the blob its head names is gone: LangGraph hands the channel back "
    "empty (recent releases first rebuild it from the checkpoints before the head, if any "
    "are left)",
}
"""What LangGraph does with a head whose history is gone, by finding code."""
JS_UNCHECKED = (
    "LangGraph.js threads are not checked against --graph: their graph is a JavaScript "
    "one, which cannot be loaded here"
)
JS_IDS_LEFT = (
    "LangGraph.js threads' interrupt ids are left alone: LangGraph.js makes them its own "
    "way, which --interrupt-ids does not name"
)


class Judge:
    """Judges the heads of one run over `store` (sync or async: it does no I/O)."""

    def __init__(self, store: Any, options: RunOptions, ledger: Ledger) -> None:
        self.store = store
        self.options = options
        self.ledger = ledger
        self.report = ledger.report
        self.said: set[str] = set()
        self._noting = threading.Lock()  # heads are judged on several threads at once

    def take_page(self, page: list[Head]) -> list[Head]:
        """The page's heads to load; those the first look cleared count as scanned now,
        the others as each is looked at (a run stopped mid-page counts only those)."""
        self.report.saw(name for head in page for name in head.channels)
        o = self.options
        to_load = page
        if self.look_suffices:
            drifts = self.checks_graph
            to_load = [
                h
                for h in page
                if h.maybe_broken
                or h.stale_since is not None
                or h.asks_again
                or (drifts and h.may_drift)
            ]
            self.report.scanned(len(page) - len(to_load))
        self.ledger.page_started(page)
        if o.waiting and self.store.lists_waiting:
            for head in page:
                self.ledger.note_waiting(head.waiting)
        return to_load

    @property
    def look_suffices(self) -> bool:
        """Whether a head the store's first look cleared needs no load: the look knows
        pairing, and a budget's tokens, only; `materialize` writes on healthy heads too,
        and `prove_history` proves every head's seeds."""
        o = self.options
        if o.materialize or o.prove_history:
            return False
        return not o.policy.reads_content or o.selection.token_budget is not None

    def stale_by_look(self, head: Head) -> Assessment | None:
        """The assessment of a head the first look cleared but for a stale answer its
        own writes prove (`Head.stale_since`), judged without loading it; None for any
        other head (one the graph may strand is loaded and checked for both)."""
        if head.maybe_broken or head.stale_since is None or not self.look_suffices:
            return None
        if head.asks_again:  # its interrupt ids are judged on the loaded head
            return None
        if self.checks_graph and head.may_drift:
            return None
        return Assessment(*head.key, status="clean", broken=False, findings=STALE_FOUND)

    @property
    def checks_graph(self) -> bool:
        """Whether heads are checked against a graph (`--graph`)."""
        return self.options.graph is not None

    def leaves_lost_history(self, head: Head, assessment: Assessment) -> bool:
        """Whether the head's stored history is gone (`Head.history_lost`): it is then
        reported, saying what LangGraph does with it, and never written on (a repair
        would store the loss as the thread's history)."""
        if not head.history_lost:
            return False
        found = tuple(
            Finding(code, channel, error=LOST_HISTORY[code]) for code, channel in head.history_lost
        )
        lost = replace(assessment, status="history_lost", findings=(*assessment.findings, *found))
        self.report.record(lost, "history_lost")
        logger.info("history_lost thread=%r ns=%r: %s", *head.key[:2], head.history_lost)
        return True

    def with_drift(self, stored: CheckpointTuple, assessment: Assessment) -> Assessment:
        """`assessment` with what the graph would skip or trap in the head (`drift`). A
        LangGraph.js thread runs a JS graph, which cannot be loaded here: the run says so
        (once) and leaves it unchecked."""
        shape = self.options.graph_shape
        if shape is None:
            return assessment
        if is_js_checkpoint(stored.checkpoint):
            self.say_once(JS_UNCHECKED)
            return assessment
        return assessment.with_findings(drift_findings(stored, shape))

    def say_once(self, warning: str) -> None:
        """Log `warning` the first time the run meets what it says."""
        with self._noting:
            first = warning not in self.said
            self.said.add(warning)
        if first:
            logger.warning(warning)

    def with_interrupt_ids(self, stored: CheckpointTuple, assessment: Assessment) -> Assessment:
        """`assessment` with what the head's interrupt ids fail to tell apart, and with
        `--interrupt-ids`, what that release would not find (`interrupt_ids`). A
        LangGraph.js thread is left alone; with the option, the run says so once."""
        if is_js_checkpoint(stored.checkpoint):
            if self.options.interrupt_ids is not None and asks_a_human(stored.pending_writes or ()):
                self.say_once(JS_IDS_LEFT)
            return assessment
        return assessment.with_findings(id_findings(stored, self.options.interrupt_ids))

    def of_other_graph(self, stored: CheckpointTuple) -> bool:
        """Whether the head belongs to another graph of the store (its metadata names
        another `graph_id`): then it is counted skipped and nothing more is done."""
        wanted = self.options.graph_id
        named = (stored.metadata or {}).get("graph_id")
        if wanted is None or named is None or named == wanted:
            return False
        key = tuple_key(stored)
        self.report.record(Assessment(*key, status="clean", broken=False), "other_graph")
        return True

    def note_loaded(self, stored: CheckpointTuple) -> None:
        """A loaded head waiting on a human, where the first look did not list it."""
        if self.options.waiting and not self.store.lists_waiting:
            head = waiting_head(stored)
            self.ledger.note_waiting(head and marked_shared(head, stored))

    def note_channels(self, tup: CheckpointTuple) -> None:
        """Count the run's channels the loaded head holds (a channel none holds is
        reported at the end)."""
        values = tup.checkpoint["channel_values"]
        self.report.saw(c for c in self.options.channels if c in values)

    def assess(
        self,
        tup: CheckpointTuple,
        proven: Mapping[str, Proof] | None = None,
        given_ids: Collection[str] = (),
    ) -> Assessment:
        o = self.options
        values = tup.checkpoint["channel_values"]
        self.note_channels(tup)
        if o.policy.rewrites_content:
            for channel in o.channels:
                if isinstance(values.get(channel), list):
                    self.report.over_history_limits(
                        history_limits(values[channel], o.policy.provider)
                    )
        return assess(
            tup,
            channels=o.channels,
            policy=o.policy,
            min_idle=o.idle,
            now=o.started,
            proven=proven,
            given_ids=given_ids,
        )

    def skip_refused(
        self, tup: CheckpointTuple, names: set[str], findings: tuple[Finding, ...]
    ) -> None:
        """Leave a head whose read refused a type or met a lost one: it holds plain data
        where the application stored an object, so writing on it would change the
        application's state. It is still assessed, to count it if broken, and checked
        against the graph: its versions and pending writes are whole, which is all that
        check reads."""
        try:
            assessment = self.assess(tup)
        except Exception:  # plain data where messages were: nothing more to say of it
            assessment = Assessment(*tuple_key(tup), status="clean", broken=False)
        assessment = replace(assessment, findings=(*findings, *assessment.findings))
        assessment = self.with_drift(tup, assessment)
        self.report.record(assessment, "refused_type")
        logger.info(
            "refused_type thread=%r ns=%r types=%s", *tuple_key(tup)[:2], ", ".join(sorted(names))
        )

    def unreadable(
        self, key: tuple[str, str, str], values: Sequence[StoredValue] | None, error: Exception
    ) -> Assessment | None:
        """The assessment of a head whose bytes do not decode; None when the failure is
        not the bytes' and the run must report it as a failure."""
        serde, nul_matters = self.store.saver.serde, self.store.nul_matters
        assessment = unreadable(key, values, error, serde, nul_matters)
        if assessment is None:
            return None
        logger.info("unreadable thread=%r ns=%r: %s", key[0], key[1], one_line(error))
        if self.options.waiting and not self.store.lists_waiting:
            self.report.waiting_not_told()  # it may wait on a human: nobody can tell
        if not self.checks_graph:
            return assessment
        unchecked = Finding("drift_unchecked", "", error=UNDECODED)
        return assessment.with_findings((unchecked,))

    def assessment(
        self,
        tup: CheckpointTuple,
        refused: set[str],
        values: Sequence[StoredValue] | None,
        proven: Mapping[str, Proof] | None = None,
        given_ids: Collection[str] = (),
    ) -> Assessment | None:
        """The assessment of a loaded head with its findings; None when it is left
        alone for a refused or lost type (recorded here). `proven`: its delta channels
        whose stored seeds the rows prove wrong; `given_ids`: those whose seeds hold
        messages without an id."""
        serde = self.store.saver.serde
        findings = findings_of(values, refused, serde, self.store.nul_matters)
        moved = self.moved_types_repair(tup, findings, values)
        if moved is not None:
            return moved
        if refused or any(finding.code == "lost_type" for finding in findings):
            self.skip_refused(tup, refused, findings)
            return None
        assessed = self.assess(tup, proven, given_ids)
        return replace(assessed, findings=(*findings, *assessed.findings))

    def moved_types_repair(
        self,
        tup: CheckpointTuple,
        findings: tuple[Finding, ...],
        values: Sequence[StoredValue] | None,
    ) -> Assessment | None:
        """The head's `type_moved` repair, where `--type-moved` names every lost type."""
        o = self.options
        if not o.moved_types or values is None:
            return None
        status = bytes_status(tup, o.idle, o.started)
        return moved_types_repair(tup, findings, values, o.moved_types, status)

    def inspects(self, head: Head, tup: CheckpointTuple, refused: set[str], rekeys: bool) -> bool:
        """Whether the head's stored values are read: for an integrity finding, for the
        row of a stale answer the run may delete, unless the first look read its pending
        writes already (`Head.writes`, which the run uses instead), or for the questions
        the run re-keys (`rekeys`, from `Judge.rekeys`)."""
        store = self.store
        if needs_inspection(tup, refused, store.saver.serde, store.nul_matters):
            return True
        drops = store.rewrites_writes and may_drop_answer(tup, self.options.policy)
        return (drops and head.writes is None) or rekeys

    def rekeys(self, tup: CheckpointTuple) -> dict[str, tuple[str, str]]:
        """The questions `--interrupt-ids` re-keys in the head, by task (none without the
        option, on a LangGraph.js thread, or where the store cannot rewrite writes)."""
        scheme = self.options.interrupt_ids
        if scheme is None or not self.store.rewrites_writes or is_js_checkpoint(tup.checkpoint):
            return {}
        return rekeys(tup, scheme)
