"""The names a run reports and the modes a user picks, in one leaf: what a repair did
(`ActionKind`), what a look found (`FindingCode`), and the choices of the storage
knobs (`storage_policy`). Every room may import it; it imports nothing of the package."""

from __future__ import annotations

from typing import Literal, get_args

DETAIL_KEY = "langgraph_repair"
"""Checkpoint metadata key holding what a repair or undo checkpoint of ours did."""

DivergenceCode = Literal["delta_value_diverged", "delta_seed_flattened"]
"""A delta channel's stored seed its rows prove wrong (`delta.proof`): one that differs
from its parent's value and the writes saved on it, or one stored as a list holding one
list of messages; the head is given the proven value (batch-only)."""
DIVERGENCE_CODES: tuple[DivergenceCode, ...] = get_args(DivergenceCode)

ActionKind = Literal[
    "placeholder",
    "call_dropped",
    "moved",
    "orphan_dropped",
    "duplicate_dropped",
    "duplicate_call_dropped",
    "unrepairable",
    # Provider hygiene (RepairPolicy.provider), never produced without a provider:
    "id_renamed",
    "thinking_dropped",
    "reasoning_dropped",
    "call_block_dropped",
    "content_filled",
    "content_cleared",
    # Oversized and unsupported content (provider limits, a model profile, max_result_chars):
    "media_removed",
    "media_downscaled",
    "result_truncated",
    # Context overflow (a token budget: max_input_tokens or the model profile's):
    "context_trimmed",
    "over_budget",
    # Stored bytes (the batch job, with `--type-moved`): a lost type renamed in place of
    # the class it moved to, no object built:
    "type_moved",
    # Stored bytes (`docs/how-to/unreadable-threads.md`), the batch job on PostgreSQL only: a
    # pending write's text
    # rewritten in place, U+0000 replaced by U+FFFD or (nul_text="strip") removed:
    "nul_replaced",
    "nul_stripped",
    # Batch-only, never produced on load: an unreadable head rewound to its newest readable
    # ancestor (`repair --rewind-unreadable`); recorded under the channel "__checkpoint__":
    "rewound",
    # A human's answer LangGraph would hand to the next question (`stale_answers`), left
    # out of a load or deleted by the batch job; recorded under the channel "__resume__":
    "resume_dropped",
    # Batch and load, only where the operator names a renamed node (`--node-renamed`,
    # `renamed_nodes=`): a head's next work moved to the node's new name, and (the batch
    # job) a stored channel the graph lacks dropped; recorded under the channel "__graph__":
    "node_renamed",
    "channel_dropped",
    # Batch-only, only where the operator names the release that will resume
    # (`--interrupt-ids`): a paused question's stored id rewritten in place to the one that
    # release computes (`interrupt_ids`); recorded under the channel "__interrupt__":
    "interrupt_rekeyed",
    # Batch-only: a delta channel's stored seed its rows prove wrong (`DivergenceCode`):
    DivergenceCode,
    # Batch-only (`materialize`): a delta channel's whole value written into a new head as a
    # plain value, for a reader that keeps the key as a plain channel:
    "materialized",
    # Batch-only, on PostgreSQL and SQLite: a delta channel's stored writes whose messages
    # have no id, rewritten in place with ids derived from their rows (`message_id_missing`):
    "message_id_stamped",
]
ACTION_KINDS: tuple[ActionKind, ...] = get_args(ActionKind)

FindingCode = Literal[
    "nul_text",
    "lost_type",
    "undecodable",
    "foreign_format",
    "stale_resume",
    "node_missing",
    "channel_missing",
    "drift_unchecked",
    "channel_ignored",
    "delta_seed_missing",
    "blob_missing",
    "interrupt_id_shared",
    "interrupt_id_mismatch",
    "over_budget",
    "not_materialized",
    "message_id_missing",
]
FINDING_CODES: tuple[FindingCode, ...] = get_args(FindingCode)
"""`foreign_format`: a write on the thread would change its rows' format (`decisions.formats`).
`stale_resume`: a human's answer the next question would be handed (`stale_answers`).
`node_missing`, `channel_missing`: the graph given with `--graph` would skip the head's
next work, or pause it forever (`drift`). `drift_unchecked`: a head `--graph` could not
check (its bytes do not decode). `channel_ignored`: a stored key holding a value the graph
lacks, which the new release never reads (said, never a gate failure).
`delta_seed_missing`, `blob_missing`: a channel's stored history is gone (rows deleted by
a prune other than ours): LangGraph rebuilds it from nothing, or hands the channel back
empty, without an error (`retention.keep`).
`interrupt_id_shared`: a paused question whose id does not tell it apart from another of
its task's; `interrupt_id_mismatch`: one whose id the release named with `--interrupt-ids`
does not compute (`interrupt_ids`).
`over_budget`: a history over the policy's token budget that no trim can make fit (the
task alone is larger, say): nothing is removed for it, and every look reports it.
`not_materialized`: a delta head `materialize` leaves as it was, and why (a channel whose
reducer it does not know, a seed its rows prove wrong).
`message_id_missing`: a delta channel's history holds messages without an id (stored
as a string, a (role, content) pair, or a message with `id=None`), which no
`RemoveMessage` can name and a reducer may give a new random id on every read."""
DRIFT_CODES: tuple[FindingCode, ...] = ("node_missing", "channel_missing")
"""The findings of a head the graph would strand."""
GATE_CODES: tuple[FindingCode, ...] = (*DRIFT_CODES, "drift_unchecked")
"""What `scan --graph` exits 1 on: a head the graph would strand, or one it could not
check (a gate never passes on a head it did not look at)."""

LostTypes = Literal["log", "raise"]
LOST_TYPES: tuple[LostTypes, ...] = get_args(LostTypes)
NulMode = Literal["replace", "strip"]
NUL_MODES: tuple[NulMode, ...] = get_args(NulMode)
InterruptIds = Literal["per-question", "first"]
INTERRUPT_ID_SCHEMES: tuple[InterruptIds, ...] = get_args(InterruptIds)
"""How a LangGraph release makes interrupt ids: one per question (1.2.20 and later), or
the task's first id for all of its questions (1.2.19 and earlier)."""
StaleResume = Literal["drop", "keep"]
STALE_RESUMES: tuple[StaleResume, ...] = get_args(StaleResume)
