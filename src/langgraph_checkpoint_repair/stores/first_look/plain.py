"""A cheap first look at stored message blobs, without building message objects.

LangGraph's default serializer stores a message list as msgpack in which each
message is an extension holding (module, class name, fields, ...). Decoding
that into plain tuples and dicts is several times cheaper than rebuilding
pydantic messages, and enough to prove most histories clean. The look is
conservative: anything unexpected answers "look closer", and the engine,
on fully loaded messages, always makes the decision.

With a token budget (`RepairPolicy.input_budget`, counted by LangChain's
approximation), a history is clean only when `token_bound` also proves it within
the budget.

A LangGraph.js head's JSON is decoded into the same (class name, fields) shape by
`js_look` and judged by the same rule (`js_blob_is_clean`).

This module needs nothing but ormsgpack, `token_bound` and `js_look`: a helper process
(`first_look.helper`) loads the three from their files alone, without the package,
and judges blobs with `serve_verdicts`.
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

import ormsgpack

_BOUND_MODULE = f"{__package__}.token_bound" if __package__ else "token_bound"
_token_bound = importlib.import_module(_BOUND_MODULE)
"""`token_bound`; in the helper process, the module loaded from its file before this one."""
history_bound: Callable[[Any], int | None] = _token_bound.history_bound
_JS_MODULE = f"{__package__}.js_look" if __package__ else "js_look"
_js_look = importlib.import_module(_JS_MODULE)
decode_js_messages: Callable[[bytes], Any] = _js_look.decode_js_messages

_PYDANTIC_EXTS = (4, 5)  # EXT_PYDANTIC_V1, EXT_PYDANTIC_V2 in langgraph's JsonPlusSerializer
_SNAPSHOT_EXT = 7  # EXT_DELTA_SNAPSHOT: a delta channel's whole value
_AI_CLASSES = frozenset({"AIMessage", "AIMessageChunk"})
_TOOL_CLASSES = frozenset({"ToolMessage", "ToolMessageChunk"})
_NON_STR_KEYS = ormsgpack.OPT_NON_STR_KEYS
_unpackb = ormsgpack.unpackb


_OTHER_CLASSES = frozenset(
    f"{kind}Message{chunk}"
    for kind in ("Human", "System", "Chat", "Function")
    for chunk in ("", "Chunk")
) | {"RemoveMessage"}
"""LangChain's other message classes: a model of another name in a message list (an
application's own, perhaps lost) sends its head to the full load, which names it."""
_CONSTRUCTOR_EXTS = (0, 1, 2, 3)  # EXT_CONSTRUCTOR_* and EXT_METHOD_SINGLE_ARG
_OWN_PACKAGES = ("langchain_core.", "langgraph.")
_OWN_STDLIB = frozenset(
    {
        "datetime",
        "uuid",
        "decimal",
        "builtins",
        "collections",
        "ipaddress",
        "pathlib",
        "zoneinfo",
        "re",
    }
)
"""Where LangGraph's safe types live: a type from anywhere else sends its head to the
full load, where the strict serializer names it (an integrity finding, perhaps). A
standard module is matched by its whole top-level name (`re`, not `reports`)."""


def _names_own_module(named: Any) -> bool:
    """Whether a constructor extension's payload starts with one of the safe modules."""
    if not (type(named) is list and named):
        return False
    module = str(named[0])
    return module.startswith(_OWN_PACKAGES) or module.partition(".")[0] in _OWN_STDLIB


class _Foreign(Exception):
    """A stored type from outside the safe modules: the first look cannot clear it."""


class NotPlainFields(dict[Any, Any]):
    """A message's fields that held an extension or a key that is not a string: read
    like any fields, but `token_bound` leaves them to the full load. The fields of every
    other message are a `dict` of plain msgpack data only (str, int, float, bool, None,
    bytes, list, dict with string keys), which reprs as the built message's values."""


class _Unknown:
    """Stands for any extension value the first look does not need to understand."""


_UNKNOWN = _Unknown()


def _plain_ext(code: int, data: bytes) -> Any:
    # This runs once per stored message: `type(...) is`, and a message's fields (rarely
    # holding an extension or a key that is not a string) decoded first without the
    # hook and options, which costs a tenth less; the decode that raised is repeated.
    if code in _PYDANTIC_EXTS:
        try:
            decoded, plain = _unpackb(data), True
        except Exception:
            decoded = _unpackb(data, ext_hook=_plain_ext, option=_NON_STR_KEYS)
            plain = False
        if type(decoded) is list and len(decoded) >= 3 and type(decoded[2]) is dict:
            fields = decoded[2] if plain else NotPlainFields(decoded[2])
            return (decoded[1], fields)  # (class name, fields)
    elif code == _SNAPSHOT_EXT:  # the list inside: a snapshot is looked at like a plain value
        inside = _unpackb(data, ext_hook=_plain_ext, option=_NON_STR_KEYS)
        # A delta channel's message without an id (`message_id_missing`): look closer.
        return inside if type(inside) is not list or all(map(_has_an_id, inside)) else _UNKNOWN
    elif code in _CONSTRUCTOR_EXTS:  # a value inside a message: a datetime, a UUID ...
        named = _unpackb(data, ext_hook=_plain_ext, option=_NON_STR_KEYS)
        if not _names_own_module(named):
            raise _Foreign
    return _UNKNOWN


EMPTY_SEEDS = frozenset({b"\xd4\x07\x90", b"\x90"})
"""An empty `_DeltaSnapshot` and an empty list, as LangGraph's serializer writes them."""


def decode_plain(blob: bytes) -> Any:
    """The msgpack blob as plain structures; messages become (class name, fields)."""
    return _unpackb(blob, ext_hook=_plain_ext, option=_NON_STR_KEYS)


def plain_history_is_clean(value: Any) -> bool:
    """True only when the decoded history certainly satisfies the pairing rules.

    It shadows the engine's pairing rule (`engine.walk`) as `engine.proof` proves
    it: every call answered exactly once in the run of results right after it,
    ending with no call unanswered.
    Only `decode_plain` makes tuples, and only of a name and a dict: a tuple is a message.
    """
    if type(value) is not list:
        return False
    expected: Any = None  # None, the one id (a str) a block waits for, or a set of them
    for item in value:
        if type(item) is not tuple:
            return False
        name, fields = item
        if name in _TOOL_CLASSES:
            answered = fields.get("tool_call_id")
            if type(expected) is str:  # the usual block: one call
                if answered != expected:
                    return False
                expected = None
            elif expected is None or answered not in expected:
                return False
            else:  # a set: a message with tens of thousands of calls stays linear
                expected.discard(answered)
                expected = expected or None
        elif expected is not None:
            return False
        elif name in _AI_CLASSES:
            expected = _awaited(fields.get("tool_calls"), fields.get("invalid_tool_calls"))
            if expected is _UNANSWERABLE:
                return False
        elif name not in _OTHER_CLASSES:
            return False
    return expected is None


_UNANSWERABLE = object()
"""What `_awaited` answers for calls that no result can answer (an id missing or reused)."""


def _awaited(calls: Any, invalid: Any) -> Any:
    """None for a message without calls; the id of its one call when that is a string;
    else the set of its call ids, or `_UNANSWERABLE` when one is missing or used twice."""
    if not calls and not invalid:
        return None
    if not invalid and type(calls) is list and len(calls) == 1 and type(calls[0]) is dict:
        call_id = calls[0].get("id")
        if type(call_id) is str and call_id:
            return call_id
    return _call_ids(calls or [], invalid or []) or _UNANSWERABLE


def _call_ids(calls: Any, invalid: Any) -> set[Any]:
    """The message's call ids; empty when one is missing or used twice."""
    ids = [c.get("id") if type(c) is dict else None for c in [*calls, *invalid]]
    unique = set(ids)
    return unique if all(ids) and len(unique) == len(ids) else set()


REMOVE_CLASS = "RemoveMessage"
REMOVE_ALL_MESSAGES = "__remove_all__"
"""LangGraph's `langgraph.graph.message.REMOVE_ALL_MESSAGES`, written out so this module
needs nothing but ormsgpack (a test holds the two equal)."""


def plain_replay(seed: Any, writes: Sequence[Any]) -> list[Any] | None:
    """A delta message channel's value from its decoded seed and writes, as LangGraph's
    reducer builds it (replace by id, `RemoveMessage`, `REMOVE_ALL_MESSAGES`); None for
    anything it does not understand (an `Overwrite`, a raw dict) or a message without
    an id (`message_id_missing`), to look closer."""
    if not isinstance(seed, list) or not all(map(_has_an_id, seed)):
        return None
    result: list[Any] = list(seed)
    index = {fields["id"]: n for n, (_, fields) in enumerate(seed)}
    for write in writes:
        for item in write if isinstance(write, list) else [write]:
            if not _has_an_id(item):
                return None
            _apply(result, index, item)
    return [item for item in result if item is not None]


def _has_an_id(item: Any) -> bool:
    """A message (only `decode_plain` makes tuples: (name, fields dict)) with an id."""
    return type(item) is tuple and item[1].get("id") is not None


def _apply(result: list[Any], index: dict[Any, int], item: tuple[str, dict[str, Any]]) -> None:
    name, fields = item
    message_id = fields.get("id")
    if name == REMOVE_CLASS:
        if message_id == REMOVE_ALL_MESSAGES:
            result.clear()
            index.clear()
        elif message_id in index:
            result[index.pop(message_id)] = None
    elif message_id in index:
        result[index[message_id]] = item
    else:
        index[message_id] = len(result)
        result.append(item)


def plain_history_fits(value: Any, budget: int | None) -> bool:
    """True only when the decoded history is certainly clean and, with a `budget`,
    certainly within it as LangChain's approximation counts it."""
    if not plain_history_is_clean(value):
        return False
    if budget is None:
        return True
    bound = history_bound(value)
    return bound is not None and bound <= budget


def plain_walk_is_clean(walk: bytes, budget: int | None = None) -> bool:
    """A delta channel's walk, packed by `pack_walk`, certainly rebuilds a clean history
    (within `budget`, if given); False for anything odd or undecodable."""
    try:
        seed, writes = ormsgpack.unpackb(walk)
        start = [] if seed is None else decode_plain(seed)
        value = plain_replay(start, [decode_plain(write) for write in writes])
        return value is not None and plain_history_fits(value, budget)
    except Exception:  # undecodable here: let the full load decide
        return False


def pack_walk(seed: bytes | None, writes: list[bytes]) -> bytes:
    """A walk (its msgpack seed blob, or None for none, and its ordered msgpack write
    blobs) as one item for `plain_walk_is_clean`."""
    return ormsgpack.packb([seed, writes])


def plain_blob_is_clean(blob: bytes, budget: int | None = None) -> bool:
    """A stored msgpack history certainly clean (within `budget`, if given); False for
    anything odd or undecodable."""
    try:
        return plain_history_fits(decode_plain(blob), budget)
    except Exception:  # undecodable here: let the full load decide
        return False


def js_blob_is_clean(blob: bytes, budget: int | None = None) -> bool:
    """A stored LangGraph.js history certainly clean; False for anything odd or
    undecodable, and under a `budget` (the token bound reads Python's fields only)."""
    if budget is not None:
        return False
    try:
        messages = decode_js_messages(blob)
        return messages is not None and plain_history_is_clean(messages)
    except Exception:  # not JSON, or not as expected: let the full load decide
        return False


def js_checkpoint_verdict(blob: bytes, channels: list[str]) -> tuple[bool, frozenset[str]]:
    """A checkpoint row of LangGraph.js's SQLite saver: whether its `channels` are
    certainly clean, and which of them it holds; (False, none) for anything odd."""
    try:
        decoded = _js_look.decode_js_checkpoint(blob, channels)
        if decoded is None:
            return False, frozenset()
        return all(map(plain_history_is_clean, decoded.values())), frozenset(decoded)
    except Exception:  # not JSON, or not as expected: let the full load decide
        return False, frozenset()


HISTORIES, WALKS, JS_HISTORIES = 0, 1, 2
"""The kinds of item a batch holds: stored histories, packed delta walks, or
LangGraph.js's stored histories."""
_JUDGES = (plain_blob_is_clean, plain_walk_is_clean, js_blob_is_clean)
NO_BUDGET = -1
"""A batch's budget on the wire when there is none."""


def plain_verdicts(
    items: Iterable[bytes], kind: int = HISTORIES, budget: int | None = None
) -> bytes:
    """The verdict of each item of `kind`, a byte each (1 clean, and within `budget`
    if given; 0 look closer)."""
    judge = _JUDGES[kind]
    if budget is None:
        return bytes(map(judge, items))
    return bytes(judge(item, budget) for item in items)


def walk_verdicts(items: Iterable[bytes], budget: int | None = None) -> bytes:
    return plain_verdicts(items, WALKS, budget)


def js_verdicts(items: Iterable[bytes], budget: int | None = None) -> bytes:
    return plain_verdicts(items, JS_HISTORIES, budget)


_HEADER = struct.Struct("<II")  # batch number, item count
_KIND = struct.Struct("<Bq")  # kind, budget (NO_BUDGET for none)
_SIZE = struct.Struct("<I")
MAX_BUDGET = 2**62
"""Budgets above this are judged as this (on the wire as a signed 64-bit number):
fewer heads cleared, never a different verdict after the full load."""


def write_batch(
    sink: IO[bytes], number: int, kind: int, blobs: list[bytes], budget: int | None = None
) -> None:
    """One batch as the helper reads it: its number, count, kind and budget, then each
    item's length and bytes."""
    wired = NO_BUDGET if budget is None else min(budget, MAX_BUDGET)
    frame = [_HEADER.pack(number, len(blobs)), _KIND.pack(kind, wired)]
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
            kind, wired = _KIND.unpack(_read_exactly(source, _KIND.size))
            items = [_read_blob(source) for _ in range(count)]
        except EOFError:
            return
        budget = None if wired == NO_BUDGET else wired
        sink.write(answer_header(number, count) + plain_verdicts(items, kind, budget))
        sink.flush()
