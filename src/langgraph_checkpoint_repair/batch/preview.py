"""`preview_thread`: what a repair would do to one thread's head, before anything is written.

The operator's look before trusting a run: the head's messages as stored (delta
channels rebuilt as LangGraph rebuilds them), the same messages repaired, and
the engine's actions. Reads only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..decisions.formats import format_finding
from ..decisions.plan import assess, tuple_key
from ..decisions.stored_bytes import findings_of, needs_inspection, unreadable
from ..decoding.integrity import Finding, StoredValue
from ..decoding.strict import refusals
from ..delta import snapshot_value
from ..delta.proof import Proof
from ..drift.findings import checked_findings
from ..drift.shape import as_shape
from ..engine import RepairAction, RepairPolicy, is_synthetic
from ..engine.media.blocks import summarized
from ..engine.policy import DEFAULT_POLICY
from ..in_flight import work_is_scheduled
from ..interrupt_ids import id_findings
from ..stores import AsyncThreadStore, ThreadStore, astore_for, store_for
from ..stores.faults import store_lost
from ..stores.history import aread_proofs, aread_rebuilt, read_proofs, read_rebuilt
from .stale import astale_found, stale_found


class ThreadNotFound(ValueError):
    """No checkpoint is stored for the (thread, namespace) asked for."""


@dataclass(frozen=True)
class ThreadPreview:
    """One head's history before and after repair, and what the repair does."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    channel: str
    before: list[BaseMessage]
    after: list[BaseMessage]
    actions: tuple[RepairAction, ...]
    in_flight_calls: tuple[str, ...]
    """Calls of the last AI message that may still run: left alone, as a run would."""
    outcome: str
    """What a run would do now: `clean`, `would_repair`, `reported` (a history over the
    token budget that no trim makes fit: nothing written, the finding said), or
    `in_flight`, `refused_type` or `foreign_format` (never written on)."""
    tokens: tuple[int, int] | None = None
    """With a token budget and a change: the history's tokens before and after."""
    findings: tuple[Finding, ...] = ()
    """What is wrong with the head's stored bytes (outcome `unreadable` when they do
    not decode: then no message is shown)."""

    @property
    def writes(self) -> bool:
        """Whether a run would write on the head now."""
        return self.outcome == "would_repair"

    def to_json(self) -> dict[str, Any]:
        tokens = (
            {"tokens": {"before": self.tokens[0], "after": self.tokens[1]}} if self.tokens else {}
        )
        return {
            "thread": self.thread_id,
            "namespace": self.checkpoint_ns,
            "checkpoint_id": self.checkpoint_id,
            "channel": self.channel,
            "before": [message_dict(m) for m in self.before],
            "after": [message_dict(m) for m in self.after],
            "actions": [a.to_dict() for a in self.actions],
            "in_flight_calls": list(self.in_flight_calls),
            "outcome": self.outcome,
            "findings": [finding.to_json() for finding in self.findings],
            **tokens,
        }


def _format_checked(
    saver: BaseCheckpointSaver[Any],
    stored: CheckpointTuple,
    preview: ThreadPreview,
    types: frozenset[str] | None,
) -> ThreadPreview:
    """The preview, its outcome `foreign_format` (and why, as a finding) where the write
    would not keep to the formats of the thread's rows, as a run decides."""
    finding = format_finding(saver, stored.checkpoint, types) if preview.writes else None
    if finding is None:
        return preview
    return replace(preview, outcome="foreign_format", findings=(*preview.findings, finding))


def message_dict(message: BaseMessage) -> dict[str, Any]:
    """A message in LangChain's dict form, with the fields an operator reads."""
    return {
        "type": message.type,
        "content": summarized(message.content),
        "id": message.id,
        "tool_calls": list(getattr(message, "tool_calls", None) or []),
        "tool_call_id": getattr(message, "tool_call_id", None),
        "synthetic": isinstance(message, ToolMessage) and is_synthetic(message),
    }


def preview_thread(
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    *,
    checkpoint_ns: str = "",
    channel: str = "messages",
    policy: RepairPolicy | None = None,
    graph: Any = None,
) -> ThreadPreview:
    """What `repair` would do to the head of `thread_id` now; writes nothing. With
    `graph` (a `StateGraph`, a compiled graph or `drift.load_graph`'s shape), what that
    graph would skip or trap in it is among the findings."""
    store = store_for(saver)
    with refusals() as refused:
        try:
            stored = store.saver.get_tuple(_head_config(thread_id, checkpoint_ns))
            if stored is None:
                raise ThreadNotFound(_not_found(thread_id, checkpoint_ns))
            loaded = read_rebuilt(store.saver, stored, [channel])
            tup = loaded.tup
            proven = read_proofs(store.saver, stored, [channel], loaded, every=True)
        except Exception as error:
            key = (thread_id, checkpoint_ns, store.head_id(thread_id, checkpoint_ns) or "")
            values = None if not key[2] else store.stored_values(key)
            return _unreadable_or_raise(store, key, channel, values, error)
    inspected = needs_inspection(tup, refused, store.saver.serde, store.nul_matters)
    values = store.stored_values(tuple_key(tup)) if inspected else None
    findings = findings_of(values, refused, store.saver.serde, store.nul_matters)
    findings += stale_found(store, stored)
    findings += id_findings(stored, None)
    findings += checked_findings(stored, None if graph is None else as_shape(graph))
    preview = _preview(tup, channel, policy or DEFAULT_POLICY, refused, proven)
    preview = replace(preview, findings=(*findings, *preview.findings))
    types = store.row_types(thread_id, checkpoint_ns) if preview.writes else None
    return _format_checked(store.saver, stored, preview, types)


async def apreview_thread(
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    *,
    checkpoint_ns: str = "",
    channel: str = "messages",
    policy: RepairPolicy | None = None,
    graph: Any = None,
) -> ThreadPreview:
    """The async twin of `preview_thread`."""
    store = astore_for(saver)
    with refusals() as refused:
        try:
            stored = await store.saver.aget_tuple(_head_config(thread_id, checkpoint_ns))
            if stored is None:
                raise ThreadNotFound(_not_found(thread_id, checkpoint_ns))
            loaded = await aread_rebuilt(store.saver, stored, [channel])
            tup = loaded.tup
            proven = await aread_proofs(store.saver, stored, [channel], loaded, every=True)
        except Exception as error:
            head = await store.head_id(thread_id, checkpoint_ns)
            key = (thread_id, checkpoint_ns, head or "")
            values = None if not head else await store.stored_values(key)
            return _unreadable_or_raise(store, key, channel, values, error)
    inspected = needs_inspection(tup, refused, store.saver.serde, store.nul_matters)
    values = await store.stored_values(tuple_key(tup)) if inspected else None
    findings = findings_of(values, refused, store.saver.serde, store.nul_matters)
    findings += await astale_found(store, stored)
    findings += id_findings(stored, None)
    findings += checked_findings(stored, None if graph is None else as_shape(graph))
    preview = _preview(tup, channel, policy or DEFAULT_POLICY, refused, proven)
    preview = replace(preview, findings=(*findings, *preview.findings))
    types = await store.row_types(thread_id, checkpoint_ns) if preview.writes else None
    return _format_checked(store.saver, stored, preview, types)


def _unreadable_or_raise(
    store: ThreadStore | AsyncThreadStore,
    key: tuple[str, str, str],
    channel: str,
    values: list[StoredValue] | None,
    error: Exception,
) -> ThreadPreview:
    """The preview of a head whose bytes do not decode; any other failure is raised."""
    if isinstance(error, ThreadNotFound) or store_lost(error):
        raise error
    assessment = unreadable(key, values, error, store.saver.serde, store.nul_matters)
    if assessment is None:
        raise error
    found = assessment.findings
    return ThreadPreview(*key, channel, [], [], (), (), "unreadable", findings=found)


def _head_config(thread_id: str, checkpoint_ns: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}}


def _not_found(thread_id: str, checkpoint_ns: str) -> str:
    where = f" in namespace {checkpoint_ns!r}" if checkpoint_ns else ""
    return f"no thread {thread_id!r}{where} in this store"


def _preview(
    tup: CheckpointTuple,
    channel: str,
    policy: RepairPolicy,
    refused: set[str],
    proven: Mapping[str, Proof],
) -> ThreadPreview:
    if refused:
        return _refused(tup, channel)
    now = datetime.now(timezone.utc)
    assessment = assess(
        tup, channels=[channel], policy=policy, min_idle=timedelta(0), now=now, proven=proven
    )
    before = snapshot_value(tup.checkpoint["channel_values"].get(channel))
    before = list(before) if isinstance(before, list) else []
    after = list(assessment.repaired.get(channel, before))
    thread_id, ns, checkpoint_id = tuple_key(tup)
    in_flight = _pending_calls(after) if work_is_scheduled(tup) else ()
    actions = assessment.actions.get(channel, ())
    outcome = {"repair": "would_repair"}.get(assessment.status, assessment.status)
    if not assessment.broken:
        outcome = "clean"  # calls in flight alone are not broken
    if outcome == "clean" and over_budget(assessment.findings):
        outcome = "reported"  # no trim makes it fit: left as it is, and said
    tokens = assessment.tokens.get(channel)
    return ThreadPreview(
        thread_id,
        ns,
        checkpoint_id,
        channel,
        before,
        after,
        actions,
        in_flight,
        outcome,
        tokens,
        assessment.findings,
    )


def over_budget(findings: Sequence[Finding]) -> Finding | None:
    """The head's `over_budget` finding, if it has one."""
    return next((finding for finding in findings if finding.code == "over_budget"), None)


def _refused(tup: CheckpointTuple, channel: str) -> ThreadPreview:
    """A head whose read refused a stored type: a run leaves it alone; its messages
    are shown as read (what came back as plain data is left out)."""
    value = snapshot_value(tup.checkpoint["channel_values"].get(channel))
    messages = [m for m in value if isinstance(m, BaseMessage)] if isinstance(value, list) else []
    thread_id, ns, checkpoint_id = tuple_key(tup)
    return ThreadPreview(
        thread_id, ns, checkpoint_id, channel, messages, messages, (), (), "refused_type"
    )


def _pending_calls(messages: list[BaseMessage]) -> tuple[str, ...]:
    """The unanswered calls of the last AI message when only its results follow it."""
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AIMessage):
            calls = [*message.tool_calls, *message.invalid_tool_calls]
            return tuple(str(c["id"]) for c in calls if c.get("id") not in answered)
        else:
            return ()
    return ()
