"""`message_id_missing` repaired in place: the delta channel's stored writes whose
messages lack an id (`delta.message_ids`) are encoded again, each such item a message
with an id derived from its row, by the saver's own serializer and in the row's own
type. The rows are the writes LangGraph replays to rebuild the head (its seed to its
parent), so every checkpoint built on them reads the same ids; the original bytes go
to the audit, and `undo` puts them back (`rewrites`)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.checkpoint.serde.base import SerializerProtocol

from ..decoding.integrity import StoredValue
from ..delta.message_ids import stamped, write_lacks_ids
from .rewrites import RewritePlan, WriteRewrite

ChainRow = tuple[str, StoredValue]
"""A stored value of one checkpoint of the head's chain, with that checkpoint's id."""


def id_stamps(
    head: tuple[str, str, str], rows: Sequence[ChainRow], serde: SerializerProtocol
) -> RewritePlan | None:
    """The writes among `rows` holding an item without an id, stamped; None when none
    can be (a write the serializer would store as another type is left as it was)."""
    writes = [w for checkpoint_id, v in rows if (w := _stamped(head, checkpoint_id, v, serde))]
    return RewritePlan(*head, "message_id_stamped", tuple(writes)) if writes else None


def _stamped(
    head: tuple[str, str, str], checkpoint_id: str, value: StoredValue, serde: SerializerProtocol
) -> WriteRewrite | None:
    if value.task_id is None or value.idx is None or value.blob is None or value.type is None:
        return None
    try:
        decoded = serde.loads_typed((value.type, value.blob))
    except Exception:  # bytes that do not decode: the integrity findings say so
        return None
    if not write_lacks_ids(decoded):
        return None
    thread_id, ns, _ = head
    where = f"{thread_id}|{ns}|{checkpoint_id}|{value.task_id}|{value.idx}"
    type_, blob = serde.dumps_typed(stamped(decoded, where))
    if type_ != value.type:
        return None
    return WriteRewrite(
        thread_id,
        ns,
        checkpoint_id,
        value.task_id,
        value.idx,
        value.channel,
        type_,
        value.blob,
        blob,
    )
