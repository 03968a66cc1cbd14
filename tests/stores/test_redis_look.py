"""The first look at a Redis head follows the full load: it never clears a history the
full load (the saver's own revival, then the engine) would repair, it clears every
plain clean one, and a head with pending writes, a channel to rebuild from earlier
checkpoints, a token budget or an odd value is loaded in full."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")

from hypothesis import HealthCheck, assume, given, settings
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.redis.jsonplus_redis import JsonPlusRedisSerializer

from langgraph_checkpoint_repair.engine import repair_messages
from langgraph_checkpoint_repair.stores.base import Head, Selection
from langgraph_checkpoint_repair.stores.redis.look import looked
from tests.engine.test_engine_proof import valid_history
from tests.support.generated import messy_history

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SERDE = JsonPlusRedisSerializer()
HEAD = Head("t", "", "c")


def document(values: dict[str, Any], versions: dict[str, Any] | None = None) -> dict[str, Any]:
    """A checkpoint document as the saver stores it: its values inline, as JSON."""
    checkpoint = empty_checkpoint()
    checkpoint["v"] = 4  # as LangGraph's loop writes it
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = dict(versions or {name: "1" for name in values})
    kind, data = SERDE.dumps_typed(checkpoint)
    if kind != "json":  # the saver's msgpack fallback (bytes in a value): not JSON
        return {"checkpoint": None}
    return {"thread_id": "t", "checkpoint_ns": "__empty__", "checkpoint_id": "c",
            "checkpoint": orjson.loads(data), "metadata": "{}"}  # fmt: skip


def full_load_repairs(doc: dict[str, Any]) -> bool:
    """The saver's revival of the stored JSON, then the engine."""
    revived = SERDE.loads_typed(("json", orjson.dumps(doc["checkpoint"])))
    return repair_messages(revived["channel_values"]["messages"]).changed


def cleared(doc: dict[str, Any], written: bool = False, **selected: Any) -> bool:
    return not looked(HEAD, doc, written, Selection(**selected)).maybe_broken


@SETTINGS
@given(messy_history())
def test_it_never_clears_a_history_the_full_load_would_repair(history: list[BaseMessage]) -> None:
    doc = document({"messages": history})
    assume(doc["checkpoint"] is not None)
    if cleared(doc):
        assert not full_load_repairs(doc)


@SETTINGS
@given(valid_history())
def test_it_clears_every_plain_clean_history(history: list[BaseMessage]) -> None:
    doc = document({"messages": history})
    assume(doc["checkpoint"] is not None)
    assert not full_load_repairs(doc)
    assert cleared(doc)


PAIRED = [
    AIMessage("", id="a", tool_calls=[{"id": "c1", "name": "t", "args": {}}]),
    ToolMessage("r", tool_call_id="c1", id="r"),
]


def test_what_the_look_cannot_prove_is_loaded() -> None:
    assert cleared(document({"messages": PAIRED}))
    assert not cleared(document({"messages": PAIRED}), written=True)  # pending writes
    assert not cleared(document({}, {"messages": "3"}))  # rebuilt from its chain
    assert not cleared(document({"messages": PAIRED}), token_budget=1_000)
    assert not cleared(document({"messages": "not a list"}))
    assert cleared(document({}))  # a thread with no messages yet: nothing to pair
    assert not cleared({"checkpoint": "odd"})
    older = document({"messages": PAIRED})
    older["checkpoint"]["v"] = 3  # its sends live on its parent: the load reads them
    assert not cleared(older)
