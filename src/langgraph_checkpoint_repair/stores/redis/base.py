"""What the Redis driver knows of langgraph-checkpoint-redis's layout, without I/O.

Each checkpoint is a RedisJSON document `checkpoint:{thread}:{ns}:{id}` holding its
values inline; `checkpoint_latest:{thread}:{ns}` names the head's key; each pending
write is a document `checkpoint_write:{thread}:{ns}:{id}:{task}:{idx}`. An empty
namespace is stored as `__empty__`. The driver finds heads by their pointers (what
the saver's own `get_tuple` resumes from), and a checkpoint's writes through the
writes' search index, which holds every write document whatever the checkpoint's
`has_writes` flag or the key registry say.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, PendingWrite
from langgraph.checkpoint.redis.base import BaseRedisSaver
from langgraph.checkpoint.redis.key_registry import SyncCheckpointKeyRegistry
from langgraph.checkpoint.redis.util import (
    from_storage_safe_id,
    from_storage_safe_str,
    to_storage_safe_id,
    to_storage_safe_str,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redisvl.query import FilterQuery
from redisvl.query.filter import Tag

from ...decisions.plan import RUN_KEY, NewCheckpoint
from ..base import Head
from ..opening_errors import TargetError
from .steps import text

WRITE_FIELDS = ["task_id", "task_path", "idx", "channel", "type", "$.blob"]
PAGE = 1000
"""Write documents read per search round trip, and pointer keys per SCAN step."""
NO_TYPES = (
    "a Redis store shows no stored bytes to types (only LangGraph's PostgreSQL and SQLite "
    "savers store msgpack it can list): its values are JSON documents"
)
HEAD_FIELDS = ("$.thread_id", "$.checkpoint_ns", "$.checkpoint_id")


def pointer_pattern(prefix: str, thread_id: str | None = None) -> str:
    """The SCAN pattern of the latest-checkpoint pointers: every one, or one thread's."""
    if thread_id is None:
        return f"{prefix}_latest:*"
    return f"{prefix}_latest:{_glob_escaped(str(to_storage_safe_id(thread_id)))}:*"


def document_pattern(prefix: str, thread_id: str | None = None) -> str:
    """The SCAN pattern of every shallow saver's document, or one thread's (a shallow
    key holds the thread id as given)."""
    if thread_id is None:
        return f"{prefix}:*"
    return f"{prefix}:{_glob_escaped(thread_id)}:*"


def _glob_escaped(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def head_of(fields: Any) -> Head | None:
    """A head from its document's identity fields (JSON.GET of `HEAD_FIELDS`); None when
    the pointer names a document that is gone."""
    if not isinstance(fields, Mapping):
        return None
    thread_id, ns, checkpoint_id = ((fields.get(path) or [None])[0] for path in HEAD_FIELDS)
    return head_named(thread_id, ns, checkpoint_id)


def head_named(thread_id: Any, ns: Any, checkpoint_id: Any) -> Head | None:
    """The head a document's stored identity names (its storage-safe forms undone);
    None where the identity is not text."""
    if not isinstance(thread_id, str) or not isinstance(checkpoint_id, str):
        return None
    return Head(
        from_storage_safe_id(thread_id),
        from_storage_safe_str(ns if isinstance(ns, str) else ""),
        from_storage_safe_id(checkpoint_id),
    )


def writes_query(thread_id: str, ns: str, checkpoint_id: str, offset: int) -> FilterQuery:
    """One page of a checkpoint's write documents, by the index's tags."""
    where = (
        (Tag("thread_id") == str(to_storage_safe_id(thread_id)))
        & (Tag("checkpoint_ns") == to_storage_safe_str(ns))
        & (Tag("checkpoint_id") == str(to_storage_safe_id(checkpoint_id)))
    )
    query = FilterQuery(filter_expression=where, return_fields=WRITE_FIELDS, num_results=PAGE)
    query.paging(offset, PAGE)
    return query


def decoded_writes(serde: SerializerProtocol, docs: Iterable[Any]) -> list[PendingWrite]:
    """The write documents as pending writes, in LangGraph's order (task path, task,
    index), as the other savers load them."""
    rows = sorted(docs, key=_write_order)
    return [
        (
            str(getattr(doc, "task_id", "")),
            str(getattr(doc, "channel", "")),
            serde.loads_typed((str(getattr(doc, "type", "")), _blob(getattr(doc, "$.blob", "")))),
        )
        for doc in rows
    ]


def _write_order(doc: Any) -> tuple[str, str, int]:
    idx = getattr(doc, "idx", 0)
    return (str(getattr(doc, "task_path", "")), str(getattr(doc, "task_id", "")), int(idx))


def _blob(stored: Any) -> bytes:
    text = stored.encode() if isinstance(stored, str) else stored
    return BaseRedisSaver._decode_blob_static(text)


def stored_metadata(raw: Any) -> Mapping[str, Any]:
    """A checkpoint document's metadata, stored as a JSON string (JSON.GET of a path hands
    it in a list); empty where it is anything else."""
    raw = raw[0] if isinstance(raw, list) and raw else raw
    try:
        found = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return found if isinstance(found, Mapping) else {}


def names_run(metadata: Any, key: str, run_id: str) -> bool:
    """Whether a checkpoint document's stored metadata names the run."""
    return stored_metadata(metadata).get(key) == run_id


def of_run(fields: Any, run_id: str) -> Head | None:
    """The checkpoint a document's identity and metadata fields name, if its metadata
    names the run; None for any other document (or a key that is no JSON document)."""
    if not isinstance(fields, Mapping) or not names_run(fields.get("$.metadata"), RUN_KEY, run_id):
        return None
    return head_of(fields)


def written_keys(saver: Any, new: NewCheckpoint) -> tuple[str, list[str]]:
    """The key of the head `new` is written on, and every key writing `new` stores (its
    document, the namespace's pointer, its writes and their registry entry), named as
    the saver names them."""
    where = new.config["configurable"]
    thread_id, ns = where["thread_id"], where.get("checkpoint_ns", "")
    head = saver._make_redis_checkpoint_key(thread_id, ns, where["checkpoint_id"])
    keys = [
        saver._make_redis_checkpoint_key(thread_id, ns, new.checkpoint_id),
        saver._make_redis_checkpoint_latest_key(thread_id, ns),
    ]
    keys += write_keys(saver, new)
    if new.writes:
        keys.append(registry_key(thread_id, ns, new.checkpoint_id))
    return head, keys


def write_keys(saver: Any, new: NewCheckpoint) -> list[str]:
    """The key of each pending write of `new`, as the saver names it."""
    where = new.config["configurable"]
    thread_id, ns = where["thread_id"], where.get("checkpoint_ns", "")
    return [
        saver._make_redis_checkpoint_writes_key(
            thread_id, ns, new.checkpoint_id, task_id, WRITES_IDX_MAP.get(channel, idx)
        )
        for task_id, writes in new.task_writes()
        for idx, (channel, _) in enumerate(writes)
    ]


def shallow_head(saver: Any, key: Any, head: Head | None) -> Head | None:
    """`head`, read from the document at `key`, where a shallow saver would store it;
    `TargetError` for a document another saver's layout put there."""
    if head is None:
        return None
    shallow = saver._make_shallow_redis_checkpoint_key(head.thread_id, head.checkpoint_ns)
    if text(key) != shallow:
        raise TargetError(
            f"the Redis key {shallow!r} holds a checkpoint the shallow savers would not "
            "store there (another saver's layout): the store is not read"
        )
    return head


def registry_key(thread_id: str, ns: str, checkpoint_id: str) -> str:
    """The saver's sorted set of a checkpoint's write keys."""
    return SyncCheckpointKeyRegistry.make_write_keys_zset_key(thread_id, ns, checkpoint_id)


NAMESPACES_INDEXED = (
    "FT.AGGREGATE", "checkpoint", "*", "LOAD", "2", "@thread_id", "@checkpoint_ns",
    "APPLY", 'format("%s\x1f%s", @thread_id, @checkpoint_ns)', "AS", "where",
    "GROUPBY", "0", "REDUCE", "COUNT_DISTINCT", "1", "@where", "AS", "n",
)  # fmt: skip
"""How many (thread, namespace) pairs the checkpoints' index holds, counted exactly by
the server."""


def distinct_count(reply: Any) -> int:
    """The count `NAMESPACES_INDEXED` answers, as RESP3's map or RESP2's list."""
    if isinstance(reply, Mapping):
        rows = _field(reply, "results") or [{}]
        return int(_field(_field(rows[0], "extra_attributes") or {}, "n") or 0)
    pairs = reply[1] if isinstance(reply, list) and len(reply) > 1 else []
    return int(_field(dict(zip(pairs[::2], pairs[1::2], strict=False)), "n") or 0)


def _field(reply: Mapping[Any, Any], name: str) -> Any:
    """A field of a server's reply, whether the client decodes replies or not."""
    return reply.get(name.encode(), reply.get(name))


def unpointed(indexed: int, pointers: int) -> str | None:
    """Why the run cannot go on when namespaces hold checkpoints but no latest pointer:
    the store is not RedisSaver's alone, and the rest would go unseen."""
    if indexed <= pointers:
        return None
    return (
        f"{indexed - pointers:,} of the store's {indexed:,} (thread, namespace) pairs hold "
        "checkpoints but no checkpoint_latest pointer: they were written by another saver "
        "(ShallowRedisSaver, LangGraph.js's Redis saver), whose layout a redis:// TARGET "
        "does not read yet; open such a store through its saver (module:attr)"
    )


DOCUMENTS_INDEXED = ("FT.SEARCH", "checkpoint", "*", "LIMIT", "0", "0")
"""How many checkpoint documents the checkpoints' index holds."""


def search_total(reply: Any) -> int:
    """The count a search answers, as RESP3's map or RESP2's list."""
    if isinstance(reply, Mapping):
        return int(_field(reply, "total_results") or 0)
    return int(reply[0]) if isinstance(reply, list) and reply else 0


def not_shallow(documents: int, pairs: int) -> str | None:
    """Why a store with no latest pointer is not the shallow savers' alone: a
    (thread, namespace) pair holds more than one document."""
    if documents <= pairs:
        return None
    return (
        f"the store holds {documents:,} checkpoint documents for {pairs:,} (thread, "
        "namespace) pairs and no checkpoint_latest pointer: the shallow savers keep one "
        "document a pair, so the rest were written by another saver (LangGraph.js's Redis "
        "saver keeps one a checkpoint), whose layout a redis:// TARGET does not read yet; "
        "open such a store through its saver (module:attr)"
    )
