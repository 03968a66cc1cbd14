"""A cheap first look at stored message blobs, without building message objects.

LangGraph's default serializer stores a message list as msgpack in which each
message is an extension holding (module, class name, fields, ...). Decoding
that into plain tuples and dicts is several times cheaper than rebuilding
pydantic messages, and enough to prove most histories clean. The look is
conservative: anything unexpected answers "look closer", and the engine,
on fully loaded messages, always makes the decision.

This module needs nothing but ormsgpack: a helper process (`stores.look_helper`)
loads it from its file alone, without the package, and judges blobs with
`serve_verdicts`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import IO, Any

import ormsgpack

_PYDANTIC_EXTS = (4, 5)  # EXT_PYDANTIC_V1, EXT_PYDANTIC_V2 in langgraph's JsonPlusSerializer
_SNAPSHOT_EXT = 7  # EXT_DELTA_SNAPSHOT: a delta channel's whole value
_AI_CLASSES = frozenset({"AIMessage", "AIMessageChunk"})
_TOOL_CLASSES = frozenset({"ToolMessage", "ToolMessageChunk"})
_NON_STR_KEYS = ormsgpack.OPT_NON_STR_KEYS
_unpackb = ormsgpack.unpackb


class _Unknown:
    """Stands for any extension value the first look does not need to understand."""


_UNKNOWN = _Unknown()


def _plain_ext(code: int, data: bytes) -> Any:
    # This runs once per stored message: `type(...) is`, and a message's fields (rarely
    # holding an extension or a key that is not a string) decoded first without the
    # hook and options, which costs a tenth less; the decode that raised is repeated.
    if code in _PYDANTIC_EXTS:
        try:
            decoded = _unpackb(data)
        except Exception:
            decoded = _unpackb(data, ext_hook=_plain_ext, option=_NON_STR_KEYS)
        if type(decoded) is list and len(decoded) >= 3 and type(decoded[2]) is dict:
            return (decoded[1], decoded[2])  # (class name, fields)
    elif code == _SNAPSHOT_EXT:  # the list inside: a snapshot is looked at like a plain value
        return _unpackb(data, ext_hook=_plain_ext, option=_NON_STR_KEYS)
    return _UNKNOWN


def decode_plain(blob: bytes) -> Any:
    """The msgpack blob as plain structures; messages become (class name, fields)."""
    return _unpackb(blob, ext_hook=_plain_ext, option=_NON_STR_KEYS)


def plain_history_is_clean(value: Any) -> bool:
    """True only when the decoded history certainly satisfies the pairing rules.

    The same rule as the engine's fast check: every call answered exactly once
    in the run of results right after it, ending with no call unanswered.
    Only `decode_plain` makes tuples, and only of a name and a dict: a tuple is a message.
    """
    if type(value) is not list:
        return False
    expected: set[Any] = set()  # a set: a message with tens of thousands of calls stays linear
    for item in value:
        if type(item) is not tuple:
            return False
        name, fields = item
        if name in _TOOL_CLASSES:
            answered = fields.get("tool_call_id")
            if answered not in expected:
                return False
            expected.discard(answered)
        elif expected:
            return False
        elif name in _AI_CLASSES:
            calls = fields.get("tool_calls")
            invalid = fields.get("invalid_tool_calls")
            if calls or invalid:
                expected = _call_ids(calls or [], invalid or [])
                if not expected:
                    return False
    return not expected


def _call_ids(calls: Any, invalid: Any) -> set[Any]:
    """The message's call ids; empty when one is missing or used twice."""
    ids = [c.get("id") if type(c) is dict else None for c in [*calls, *invalid]]
    unique = set(ids)
    return unique if all(ids) and len(unique) == len(ids) else set()


def plain_blob_is_clean(blob: bytes) -> bool:
    """A stored msgpack history certainly clean; False for anything odd or undecodable."""
    try:
        return plain_history_is_clean(decode_plain(blob))
    except Exception:  # undecodable here: let the full load decide
        return False


def plain_verdicts(blobs: Iterable[bytes]) -> bytes:
    """`plain_blob_is_clean` of each blob, as one byte each (1 clean, 0 look closer)."""
    return bytes(plain_blob_is_clean(blob) for blob in blobs)


_HEADER = struct.Struct("<II")  # batch number, blob count
_SIZE = struct.Struct("<I")


def write_batch(sink: IO[bytes], number: int, blobs: list[bytes]) -> None:
    """One batch of blobs as the helper reads it: its number and count, then each
    blob's length and bytes."""
    frame = [_HEADER.pack(number, len(blobs))]
    for blob in blobs:
        frame += (_SIZE.pack(len(blob)), blob)
    sink.write(b"".join(frame))
    sink.flush()


def answer_header(number: int, count: int) -> bytes:
    """What the helper's answer to batch `number` of `count` blobs starts with."""
    return _HEADER.pack(number, count)


def _read_exactly(source: IO[bytes], size: int) -> bytes:
    data = source.read(size)
    if len(data) != size:
        raise EOFError
    return data


def _read_blob(source: IO[bytes]) -> bytes:
    (size,) = _SIZE.unpack(_read_exactly(source, _SIZE.size))
    return _read_exactly(source, size)


def serve_verdicts(source: IO[bytes], sink: IO[bytes]) -> None:
    """The helper's loop: read a batch, answer its header and verdicts, until the
    input ends."""
    while True:
        try:
            number, count = _HEADER.unpack(_read_exactly(source, _HEADER.size))
            blobs = [_read_blob(source) for _ in range(count)]
        except EOFError:
            return
        sink.write(answer_header(number, count) + plain_verdicts(blobs))
        sink.flush()
