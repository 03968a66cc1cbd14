"""The first look at a page of Redis heads, from their documents as stored.

The saver keeps a checkpoint's values inline as LangChain's JSON: each message is
`{"lc": 1, "type": "constructor", "id": [..., "messages", CLASS], "kwargs": {...}}`.
Read as (class, kwargs) pairs, the shape the other first looks give, a history's
pairing is proven without reviving a single LangChain object (reviving them is most
of what the saver's own `get_tuple` costs). A head the look clears is not loaded: it
has no pending write, stores each selected channel itself (no delta channel to
rebuild) and pairs every call. Anything else, or anything odd, is loaded in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.redis.util import to_storage_safe_id
from redisvl.query import FilterQuery
from redisvl.query.filter import Tag

from ...retention.keep import read_checkpoint
from ..base import Head, Selection
from ..first_look.plain import plain_history_is_clean
from ..generic.lost import Lost, lost_in
from .base import head_named, stored_metadata

MESSAGE_IDS = (["langchain", "schema", "messages"], ["langchain_core", "messages"])
"""What a message's `id` starts with, as LangChain (Python, JS) names its classes."""
IDENTITY = ["thread_id", "checkpoint_ns", "checkpoint_id"]
FORMAT = 4
"""The oldest checkpoint format the look reads, the one LangGraph's loop writes (a
format before it keeps pending sends on the parent checkpoint)."""


def head_of_document(document: Any) -> Head | None:
    """The head a checkpoint document is; None for a document that is gone or odd."""
    if not isinstance(document, Mapping):
        return None
    return head_named(*(document.get(name) for name in IDENTITY))


def looked(head: Head, document: Mapping[str, Any], written: bool, selection: Selection) -> Head:
    """The head with what its document proves: clean (`maybe_broken` False) only when it
    has no pending write and each selected channel it names is stored and pairs."""
    head = replace(head, asks_again=written)
    if written or selection.token_budget is not None:
        return head
    checkpoint = document.get("checkpoint")
    if not isinstance(checkpoint, Mapping) or not _current(checkpoint.get("v")):
        return head  # an older format may hold sends its parent stores: loaded
    values = checkpoint.get("channel_values") or {}
    versions = checkpoint.get("channel_versions") or {}
    named = [c for c in selection.channels if c in values or c in versions]
    if any(c not in values for c in named):
        return head  # a channel rebuilt from earlier checkpoints: the load rebuilds it
    histories = [_messages(values[c]) for c in named]
    if all(h is not None and plain_history_is_clean(h) for h in histories):
        return replace(head, maybe_broken=False, channels=frozenset(named))
    return head


def _current(version: Any) -> bool:
    return type(version) is int and version >= FORMAT


def _messages(value: Any) -> list[tuple[str, dict[str, Any]]] | None:
    if type(value) is not list:
        return None
    pairs = []
    for item in value:
        if type(item) is not dict or item.get("lc") != 1 or item.get("type") != "constructor":
            return None
        ident, kwargs = item.get("id"), item.get("kwargs")
        if type(ident) is not list or not ident or type(kwargs) is not dict:
            return None
        if ident[:-1] not in MESSAGE_IDS:
            return None
        pairs.append((str(ident[-1]), kwargs))
    return pairs


def shows_delta(document: Mapping[str, Any]) -> bool:
    """Whether the checkpoint counts updates of a delta channel since its snapshot."""
    return bool(stored_metadata(document.get("metadata")).get("counters_since_delta_snapshot"))


def written_query(heads: Sequence[Head], offset: int, size: int) -> FilterQuery:
    """The write documents of any of the page's heads, by checkpoint id (one query)."""
    ids = sorted({str(to_storage_safe_id(head.checkpoint_id)) for head in heads})
    query = FilterQuery(
        filter_expression=Tag("checkpoint_id") == ids, return_fields=IDENTITY, num_results=size
    )
    query.paging(offset, size)
    return query


def written_heads(docs: Iterable[Any]) -> set[tuple[str, str, str]]:
    """(thread, namespace, checkpoint) of each write document found."""
    named = (head_named(*(str(getattr(doc, name, "")) for name in IDENTITY)) for doc in docs)
    return {head.key for head in named if head is not None}


def lost_in_document(document: Mapping[str, Any], channels: Sequence[str]) -> Lost:
    """`delta_seed_missing` for each selected channel a shallow head rebuilds from
    earlier checkpoints: a shallow saver keeps none, so LangGraph would rebuild it from
    nothing."""
    head = head_of_document(document)
    checkpoint = document.get("checkpoint")
    if head is None or not isinstance(checkpoint, Mapping):
        return ()
    metadata = stored_metadata(document.get("metadata"))
    row = read_checkpoint((head.checkpoint_ns, head.checkpoint_id, None), checkpoint, metadata)
    return lost_in({row.checkpoint_id: row}, channels)
