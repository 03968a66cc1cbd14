"""A LangGraph.js head's stored messages as plain structures, for the first look
(`plain.js_blob_is_clean`), without reviving LangChain objects.

LangChain.js stores a message list as JSON in which each message is
`{"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", X], "kwargs": {...}}`.
Parsing that with orjson and reading each message as (class name, kwargs), the shape
`plain.decode_plain` gives a msgpack message, is all the pairing proof needs; building
LangChain's messages through its reviver costs several times more. The decoding is
conservative: a class LangChain.js and Python do not share, a constructor nested in a
message (which the full load refuses and reports), or anything else unexpected gives
None or raises, and the head is loaded in full.

This module needs nothing but orjson: the first-look helper process (`helper`)
loads it from its file alone, as it loads `plain`.
"""

from __future__ import annotations

from typing import Any

import orjson

JS_MESSAGE_CLASSES = frozenset(
    f"{kind}Message{chunk}" for kind in ("AI", "Human", "System", "Tool") for chunk in ("", "Chunk")
)
"""The classes the full load builds from a LangGraph.js value (`js.values.MESSAGE_CLASSES`)."""
_IDS = {name: ["langchain_core", "messages", name] for name in JS_MESSAGE_CLASSES}
"""Each class's id, as LangChain.js writes it: one list comparison checks all three parts."""
_CONSTRUCTOR = b'"constructor"'


Messages = list[tuple[str, dict[str, Any]]]


def decode_js_messages(blob: bytes) -> Messages | None:
    """The stored list as (class name, kwargs) pairs; None where it is anything else, or
    holds a constructor other than its messages (counted in the bytes first: a string
    value or key "constructor" only sends the head to the full load). Odd items raise."""
    value = orjson.loads(blob)
    if type(value) is not list or blob.count(_CONSTRUCTOR) != len(value):
        return None
    return _messages(value)


def decode_js_checkpoint(blob: bytes, channels: list[str]) -> dict[str, Messages] | None:
    """A checkpoint row of LangGraph.js's SQLite saver (values inline): each of the
    `channels` it holds as (class name, kwargs) pairs; None where one is not such a list
    or the row holds a constructor anywhere else, and where one has a version but no
    value (a delta channel, rebuilt from the writes of the checkpoints before it)."""
    checkpoint = orjson.loads(blob)
    values, versions = checkpoint["channel_values"], checkpoint["channel_versions"]
    if any(channel in versions and channel not in values for channel in channels):
        return None
    found = {channel: values[channel] for channel in channels if channel in values}
    if any(type(value) is not list for value in found.values()):
        return None
    if blob.count(_CONSTRUCTOR) != sum(map(len, found.values())):
        return None
    decoded = {}
    for channel, value in found.items():
        messages = _messages(value)
        if messages is None:
            return None
        decoded[channel] = messages
    return decoded


def _messages(value: list[Any]) -> Messages | None:
    messages = []
    for item in value:
        ident, kwargs = item["id"], item["kwargs"]
        if _IDS.get(ident[-1]) != ident or type(kwargs) is not dict:
            return None
        if item["lc"] != 1 or item["type"] != "constructor":
            return None
        messages.append((ident[-1], kwargs))
    return messages
