"""`rename_types` on blobs LangGraph's own serializer writes: no mapping or no match
gives back the very same bytes, a moved dataclass decodes as its new class with equal
fields, and every byte outside the renamed extensions is as it was."""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from langgraph_checkpoint_repair.compatibility import features
from langgraph_checkpoint_repair.decoding.load_watcher import LoadWatcher
from langgraph_checkpoint_repair.decoding.names import TypeName, UndecodableBytes
from langgraph_checkpoint_repair.decoding.rename import (
    ext_bytes,
    moved_from,
    parse_moved,
    rename_types,
    str_bytes,
)


@dataclass
class Point:
    x: int
    label: Any


@dataclass
class MovedPoint:
    x: int
    label: Any


class Item(BaseModel):
    name: str
    qty: int


HERE = __name__
OLD: TypeName = (HERE, "Point")
NEW: TypeName = (HERE, "MovedPoint")
SERDE = JsonPlusSerializer()
HUMAN: TypeName = ("langchain_core.messages.human", "HumanMessage")

texts = st.text(max_size=40)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False),
    texts,
    st.binary(max_size=300),
    st.datetimes(timezones=st.sampled_from([None, datetime.timezone.utc])),
)


def objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The classes LangGraph stores as extensions, holding other values."""
    found = [
        st.builds(Point, x=st.integers(-1000, 1000), label=children),
        st.builds(HumanMessage, content=texts),
        st.builds(AIMessage, content=texts),
        st.builds(Item, name=texts, qty=st.integers(0, 99)),
    ]
    if features.has_delta_channels():
        found.append(st.builds(features._DeltaSnapshot, children))
    return st.one_of(found)


values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(texts, children, max_size=5),
        objects(children),
    ),
    max_leaves=25,
)
QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def dumped(value: Any) -> bytes:
    """The value as LangGraph stores it (held in a list: None and bytes are not msgpack)."""
    kind, blob = SERDE.dumps_typed([value])
    assert kind == "msgpack"
    return blob


@QUICK
@given(values)
def test_no_mapping_gives_back_the_very_same_bytes(value: Any) -> None:
    blob = dumped(value)
    assert rename_types(blob, {}) is blob


@QUICK
@given(values)
def test_no_name_matched_gives_back_the_same_bytes(value: Any) -> None:
    """Modules that are in the blob, names that are not: the whole blob is walked."""
    blob = dumped(value)
    moved = {(HERE, "Absent"): NEW, (HUMAN[0], "Absent"): NEW}
    assert rename_types(blob, moved) == blob


@QUICK
@given(values, st.text(alphabet="abcXYZ_", min_size=1, max_size=300))
def test_a_rename_and_its_reverse_give_back_the_bytes(value: Any, name: str) -> None:
    """Any length of new name (every ext header form on the way) and back again."""
    blob = dumped(value)
    elsewhere: TypeName = (f"{HERE}_{name}", f"P{name}")
    there = rename_types(blob, {OLD: elsewhere})
    assert rename_types(there, {elsewhere: OLD}) == blob


@QUICK
@given(values)
def test_a_moved_dataclass_decodes_as_the_new_class(value: Any) -> None:
    blob = dumped(value)
    renamed = rename_types(blob, {OLD: NEW})
    assert SERDE.loads_typed(("msgpack", renamed)) == moved(SERDE.loads_typed(("msgpack", blob)))


@QUICK
@given(values)
def test_bytes_outside_renamed_extensions_are_unchanged(value: Any) -> None:
    blob = dumped(value)
    renamed = rename_types(blob, {OLD: NEW, HUMAN: ("elsewhere.messages", "Human")})
    expected = renamed_names(plain(blob), {OLD: NEW, HUMAN: ("elsewhere.messages", "Human")})
    assert same(plain(renamed), expected)


def moved(value: Any) -> Any:
    """The decoded value with each Point a MovedPoint."""
    if isinstance(value, Point):
        return MovedPoint(value.x, moved(value.label))
    if isinstance(value, list):
        return [moved(item) for item in value]
    if isinstance(value, dict):
        return {key: moved(item) for key, item in value.items()}
    if features.has_delta_channels() and isinstance(value, features._DeltaSnapshot):
        return features._DeltaSnapshot(moved(value.value))
    return value


def plain(blob: bytes) -> Any:
    """The blob with each extension as ("ext", code, its unpacked payload)."""

    def hook(code: int, data: bytes) -> Any:
        return ("ext", code, ormsgpack.unpackb(data, ext_hook=hook, option=OPTION))

    return ormsgpack.unpackb(blob, ext_hook=hook, option=OPTION)


OPTION = ormsgpack.OPT_NON_STR_KEYS


def renamed_names(value: Any, moves: dict[TypeName, TypeName]) -> Any:
    if isinstance(value, tuple) and value[:1] == ("ext",):
        _, code, payload = value
        payload = renamed_names(payload, moves)
        if code != 7 and isinstance(payload, list) and tuple(payload[:2]) in moves:
            payload = [*moves[(payload[0], payload[1])], *payload[2:]]
        return ("ext", code, payload)
    if isinstance(value, list):
        return [renamed_names(item, moves) for item in value]
    if isinstance(value, dict):
        return {key: renamed_names(item, moves) for key, item in value.items()}
    return value


def same(left: Any, right: Any) -> bool:
    """Equal structures, floats compared by their bits (-0.0 is not 0.0 here)."""
    if isinstance(left, float) and isinstance(right, float):
        return math.copysign(1, left) == math.copysign(1, right) and left == right
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    return bool(type(left) is type(right) and left == right)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 8, 15, 16, 17, 255, 256, 65535, 65536])
def test_the_ext_header_is_the_one_msgpack_chooses(size: int) -> None:
    payload = b"x" * size
    assert ext_bytes(5, payload) == ormsgpack.packb(ormsgpack.Ext(5, payload))


@pytest.mark.parametrize("size", [0, 31, 32, 255, 256, 65535, 65536])
def test_the_str_header_is_the_one_msgpack_chooses(size: int) -> None:
    assert str_bytes("é" * (size // 2) + "a" * (size % 2)) == ormsgpack.packb(
        "é" * (size // 2) + "a" * (size % 2)
    )


def test_a_nested_rename_reaches_inside_a_pydantic_model_and_a_snapshot() -> None:
    if not features.has_delta_channels():
        pytest.skip("delta snapshots need langgraph-checkpoint 4")
    value = features._DeltaSnapshot([{"p": Point(1, [Point(2, "deep")])}])
    renamed = rename_types(dumped(value), {OLD: NEW})
    [loaded] = SERDE.loads_typed(("msgpack", renamed))
    assert loaded.value == [{"p": MovedPoint(1, [MovedPoint(2, "deep")])}]


def test_bytes_that_are_not_msgpack_are_undecodable() -> None:
    blob = dumped([Point(1, "a"), "tail"])
    with pytest.raises(UndecodableBytes):
        rename_types(blob[:-3], {OLD: NEW})


def test_a_moved_type_is_parsed_from_old_equals_new() -> None:
    assert parse_moved(" shop.models:Order = shop.orders:Order ") == (
        ("shop.models", "Order"),
        ("shop.orders", "Order"),
    )
    assert moved_from({"a.b:C": "d:E"}) == {("a.b", "C"): ("d", "E")}
    assert moved_from(["a.b:C=d:E"]) == {("a.b", "C"): ("d", "E")}


@pytest.mark.parametrize("text", ["shop.models:Order", "a:B=", "=a:B", "a.B=c:D", "a:B=c:D=e:F"])
def test_a_malformed_moved_type_is_one_clear_line(text: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_moved(text)
    message = str(raised.value)
    assert "\n" not in message and ("not a moved type" in message or "not a type" in message)


@pytest.mark.skipif(not features.HAS_MSGPACK_ALLOWLIST, reason="needs langgraph-checkpoint 4")
def test_the_proxy_renames_loads_and_leaves_writes_and_the_rest_to_the_inner() -> None:
    inner = JsonPlusSerializer(allowed_msgpack_modules=None)
    proxy = LoadWatcher(inner, {OLD: NEW})
    stored = inner.dumps_typed([Point(1, "a")])
    assert proxy.dumps_typed([Point(1, "a")]) == stored
    assert proxy.pickle_fallback is inner.pickle_fallback
    widened = proxy.with_msgpack_allowlist([NEW])
    assert isinstance(widened, LoadWatcher) and widened.moved == proxy.moved
    assert widened.inner is not inner
    assert widened.loads_typed(stored) == [MovedPoint(1, "a")]
    assert proxy.loads_typed(stored) == [{"x": 1, "label": "a"}]  # strict: refused as data
