"""The first look gives exactly what the look before its speed work gave.

`tests.support.previous_look` keeps that look. On histories a real serializer stored
and on hostile msgpack (messages whose fields are not a dict, calls of every
odd shape, unknown extensions, keys that are not strings, truncated bytes),
both must reach the same verdict (failing on a history counts as "look
closer", as for every caller), replay a delta channel to the same history,
and fail to decode the same blobs.

One difference is on purpose: the look now reads the name inside each constructor
extension (a datetime, a UUID ...), and a name from outside LangGraph's safe modules,
or one it cannot read, sends the head to the full load, where the strict serializer
names the type. The look before took any such extension as an unknown value. A blob
that names one (`names_a_foreign_type`, found on the blob's own bytes) is never
cleared by the look; every other blob gets the previous look's verdict.

One rule was added since: a delta channel's message without an id (in a stored
snapshot, a walk's seed or its writes) is never cleared: it is `message_id_missing`,
which the full load reports. Everywhere else the verdicts stay the previous look's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import ormsgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_checkpoint_repair.stores.first_look import plain
from tests.support.generated import messy_history
from tests.support.previous_look import plain as previous

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NON_STR_KEYS = ormsgpack.OPT_NON_STR_KEYS

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["a", "b", "", REMOVE_ALL_MESSAGES])
    | st.binary(max_size=3)
    | st.builds(ormsgpack.Ext, st.sampled_from([4, 5, 7, 9]), st.binary(max_size=4))
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["id", "k", 1]), inner, max_size=3)
    ),
    max_leaves=6,
)
call_ids = st.sampled_from(["a", "b", "c", None, "", 1, 1.0, True, [], ["a"], {"id": "a"}])
"""Ids as stored, and odd ones: equal to another under another type, or unhashable."""
calls = st.lists(st.fixed_dictionaries({"id": call_ids}) | values, max_size=3) | values
fields = (
    st.fixed_dictionaries(
        {},
        optional={
            "tool_calls": calls,
            "invalid_tool_calls": calls,
            "tool_call_id": call_ids,
            "id": st.sampled_from(["m1", "m2", None, REMOVE_ALL_MESSAGES]),
            "content": values,
            1: values,  # a key that is not a string
        },
    )
    | values
)
MESSAGE_CLASSES = "AIMessage AIMessageChunk ToolMessage ToolMessageChunk HumanMessage RemoveMessage"
names = st.sampled_from([*MESSAGE_CLASSES.split(), "Other"])


@st.composite
def message_ext(draw: st.DrawFn) -> ormsgpack.Ext:
    """A message as LangGraph's serializer stores it, or something shaped almost so."""
    parts: list[Any] = ["langchain_core.messages", draw(names), draw(fields), "model_validate"]
    parts = parts[: draw(st.sampled_from([4, 4, 4, 3, 2]))]
    payload = ormsgpack.packb(parts, option=NON_STR_KEYS)
    if draw(st.integers(0, 9)) == 0:
        payload = payload[: draw(st.integers(0, len(payload)))]  # cut short
    return ormsgpack.Ext(draw(st.sampled_from([5, 5, 5, 4, 7, 9])), payload)


@st.composite
def hostile_blob(draw: st.DrawFn) -> bytes:
    items = draw(st.lists(message_ext() | values, max_size=8))
    value: Any = items if draw(st.integers(0, 9)) else draw(values)
    if draw(st.integers(0, 9)) == 0:
        value = ormsgpack.Ext(7, ormsgpack.packb(items, option=NON_STR_KEYS))  # a snapshot
    blob = ormsgpack.packb(value, option=NON_STR_KEYS)
    if draw(st.integers(0, 19)) == 0:
        blob = blob[: draw(st.integers(0, len(blob)))]
    return blob


READ_INSIDE = (*plain._PYDANTIC_EXTS, plain._SNAPSHOT_EXT)
"""A message or a snapshot: the look reads the extensions inside."""


def names_a_foreign_type(blob: bytes) -> bool:
    """Whether a constructor extension the look reads (at the top, or inside a message
    or a snapshot) names a module outside the safe ones, or cannot be read. Which modules
    are safe is the look's own rule, tied to LangGraph's safe types in `test_plain_look`
    and pinned here by `test_a_constructor_naming_no_safe_module_is_never_cleared`."""
    found: list[bool] = []

    def hook(code: int, data: bytes) -> None:
        if code in plain._CONSTRUCTOR_EXTS:
            try:
                named = ormsgpack.unpackb(data, ext_hook=hook, option=NON_STR_KEYS)
            except Exception:
                named = None
            if not plain._names_own_module(named):
                found.append(True)
        elif code in READ_INSIDE:
            with contextlib.suppress(Exception):
                ormsgpack.unpackb(data, ext_hook=hook, option=NON_STR_KEYS)

    with contextlib.suppress(Exception):
        ormsgpack.unpackb(blob, ext_hook=hook, option=NON_STR_KEYS)
    return bool(found)


def _lacks_an_id(item: Any) -> bool:
    return type(item) is tuple and type(item[1]) is dict and item[1].get("id") is None


def holds_no_id(values: Iterable[Any]) -> bool:
    """Whether decoded delta values (a seed, writes) hold a message without an id."""
    return any(
        any(map(_lacks_an_id, value if isinstance(value, list) else [value])) for value in values
    )


def snapshot_without_ids(blob: bytes) -> bool:
    """Whether a blob holds, anywhere, a delta snapshot with a message without an id."""
    found: list[bool] = []

    def hook(code: int, data: bytes) -> None:
        if code == plain._SNAPSHOT_EXT:
            with contextlib.suppress(Exception):
                if holds_no_id([previous.decode_plain(data)]):
                    found.append(True)
        with contextlib.suppress(Exception):
            ormsgpack.unpackb(data, ext_hook=hook, option=NON_STR_KEYS)

    with contextlib.suppress(Exception):
        ormsgpack.unpackb(blob, ext_hook=hook, option=NON_STR_KEYS)
    return bool(found)


def same_or_closer(now: Any, before: Any, closer: bool) -> bool:
    """`now` is the previous verdict, or, where the added rule applies (`closer`), a
    verdict that clears nothing the previous look did not."""
    return now == before or (closer and now is not True)


def any_foreign(blobs: Iterable[bytes | None]) -> bool:
    """Whether any blob (None: no blob) names a foreign type."""
    return any(blob is not None and names_a_foreign_type(blob) for blob in blobs)


def verdict(look: Any, blob: bytes) -> Any:
    """The look's verdict on a blob; failing to decode it is part of the outcome."""
    try:
        decoded = look.decode_plain(blob)
    except Exception as error:
        return type(error)
    return checked(look, decoded)


def checked(look: Any, value: Any) -> bool:
    """The look's check of a decoded history; a history it fails on is one to look
    closer at (False), as every caller takes it (`plain_blob_is_clean`)."""
    try:
        return bool(look.plain_history_is_clean(value))
    except Exception:
        return False


def replayed(look: Any, replay: Any, seed: bytes, writes: list[bytes]) -> Any:
    """The replay's verdict: None when it gives up, else the replayed history's."""
    try:
        value = replay(look.decode_plain(seed), [look.decode_plain(w) for w in writes])
    except Exception as error:
        return type(error)
    return None if value is None else (len(value), checked(look, value))


@SETTINGS
@given(messy_history())
def test_stored_histories_get_the_same_verdict(history: Any) -> None:
    _, blob = JsonPlusSerializer().dumps_typed(history)
    closer = snapshot_without_ids(blob)
    assert same_or_closer(verdict(plain, blob), verdict(previous, blob), closer)


@SETTINGS
@given(hostile_blob())
def test_hostile_blobs_get_the_same_verdict(blob: bytes) -> None:
    if names_a_foreign_type(blob):
        assert verdict(plain, blob) is not True
    else:
        closer = snapshot_without_ids(blob)
        assert same_or_closer(verdict(plain, blob), verdict(previous, blob), closer)


@SETTINGS
@given(hostile_blob(), st.lists(hostile_blob(), max_size=3))
def test_delta_replays_are_the_same(seed: bytes, writes: list[bytes]) -> None:
    now = replayed(plain, plain.plain_replay, seed, writes)
    if any_foreign([seed, *writes]) or _decoded_without_ids(seed, writes):
        assert not (type(now) is tuple and now[1])
    else:
        assert now == replayed(previous, previous.plain_replay, seed, writes)


def _decoded_without_ids(seed: bytes | None, writes: list[bytes]) -> bool:
    """Whether the walk (as the previous look decodes it) holds a message without an id."""
    blobs = [blob for blob in (seed, *writes) if blob is not None]
    if any(map(snapshot_without_ids, blobs)):
        return True
    try:
        return holds_no_id(previous.decode_plain(blob) for blob in blobs)
    except Exception:
        return False


@SETTINGS
@given(st.one_of(st.none(), hostile_blob()), st.lists(hostile_blob(), max_size=3))
def test_packed_walks_get_the_verdict_of_the_previous_replay(
    seed: bytes | None, writes: list[bytes]
) -> None:
    """What the page's walks are judged by (`plain_walk_is_clean`) against the previous
    look's own steps: decode the seed (none: an empty list) and writes, replay, check."""
    try:
        start = [] if seed is None else previous.decode_plain(seed)
        value = previous.plain_replay(start, [previous.decode_plain(w) for w in writes])
        expected = value is not None and previous.plain_history_is_clean(value)
    except Exception:
        expected = False
    if any_foreign([seed, *writes]) or _decoded_without_ids(seed, writes):
        expected = False
    assert plain.plain_walk_is_clean(plain.pack_walk(seed, writes)) is expected


def test_the_remove_all_sentinel_is_langgraphs() -> None:
    assert plain.REMOVE_ALL_MESSAGES == REMOVE_ALL_MESSAGES


def test_the_hostile_strategy_reaches_both_verdicts() -> None:
    """The comparison above means something only if clean and broken blobs both occur."""
    call = {"id": "a"}
    ai = ormsgpack.Ext(
        5, ormsgpack.packb(["langchain_core.messages.ai", "AIMessage", {"tool_calls": [call]}, "v"])
    )
    tool = ormsgpack.Ext(
        5,
        ormsgpack.packb(
            ["langchain_core.messages.tool", "ToolMessage", {"tool_call_id": "a"}, "v"]
        ),
    )
    clean, broken = ormsgpack.packb([ai, tool]), ormsgpack.packb([ai])
    assert verdict(plain, clean) is True and verdict(previous, clean) is True
    assert verdict(plain, broken) is False and verdict(previous, broken) is False


FAILED_ONCE = (
    b"\xc7>\x07\x92\xc73\x05\x94\xb7langchain_core.messages\xa9AIMessage\x80"
    b"\xaemodel_validate\x91\xc7\x03\x04\xd4\x00\x00"
)
"""A snapshot of a message and a list holding a message extension whose payload is a
constructor extension of code 0 around one byte: no module named."""


def test_a_constructor_naming_no_safe_module_is_never_cleared() -> None:
    when = ormsgpack.Ext(0, ormsgpack.packb(["datetime", "datetime", "x"]))
    other = ormsgpack.Ext(0, ormsgpack.packb(["shop.models", "Order", "x"]))
    near = ormsgpack.Ext(0, ormsgpack.packb(["reports.models", "Report", "x"]))  # not `re`

    def stored(value: ormsgpack.Ext) -> bytes:
        fields = {"content": "", "when": value}
        ai = ["langchain_core.messages.ai", "AIMessage", fields, "v"]
        return ormsgpack.packb([ormsgpack.Ext(5, ormsgpack.packb(ai))])

    dated, foreign = stored(when), stored(other)
    assert not names_a_foreign_type(dated)
    assert verdict(plain, dated) is True and verdict(previous, dated) is True
    assert names_a_foreign_type(foreign) and names_a_foreign_type(FAILED_ONCE)
    assert verdict(previous, foreign) is True  # the look before took it as unknown
    assert verdict(plain, foreign) is not True and verdict(plain, FAILED_ONCE) is not True
    assert names_a_foreign_type(stored(near)) and verdict(plain, stored(near)) is not True


ODD_IDS: list[Any] = ["a", "b", None, "", 1, 1.0, True, [], ["a"], {"id": "a"}]


def test_every_pair_of_odd_ids_gets_the_same_verdict() -> None:
    """A call of each id answered by a result of each id, alone or beside a second
    call: every pair, not only the ones the strategies happen to draw."""
    for call_id in ODD_IDS:
        for answer_id in ODD_IDS:
            for calls in ([{"id": call_id}], [{"id": call_id}, {"id": "z"}]):
                ai = ["langchain_core.messages.ai", "AIMessage", {"tool_calls": calls}, "v"]
                tool = [
                    "langchain_core.messages.tool",
                    "ToolMessage",
                    {"tool_call_id": answer_id},
                    "v",
                ]
                z = ["langchain_core.messages.tool", "ToolMessage", {"tool_call_id": "z"}, "v"]
                exts = [ormsgpack.Ext(5, ormsgpack.packb(part)) for part in (ai, tool, z)]
                blob = ormsgpack.packb(exts[: len(calls) + 1])
                assert verdict(plain, blob) == verdict(previous, blob), (calls, answer_id)
