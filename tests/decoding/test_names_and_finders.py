"""Reading the types a blob names, and whether each can be rebuilt here, runs nothing:
the names come from the bytes alone, and a module is found by the import system's
finders without executing it (its package's `__init__` included)."""

from __future__ import annotations

import datetime
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import ormsgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from langgraph_checkpoint_repair.decoding.finders import lost_reason, module_findable, type_status
from langgraph_checkpoint_repair.decoding.integrity import (
    StoredValue,
    Trust,
    inspect_values,
    nul_in_text,
    suspect,
)
from langgraph_checkpoint_repair.decoding.names import UndecodableBytes, named_types
from langgraph_checkpoint_repair.decoding.strict import SAFE_METHODS, SAFE_TYPES, StrictSerializer
from langgraph_checkpoint_repair.decoding.watch import why_lost

SERDE = JsonPlusSerializer()
TRUST = Trust(SAFE_TYPES | SAFE_METHODS)


@dataclass
class Parcel:
    weight: int


class Receipt(BaseModel):
    total: float


def blob(value: object) -> bytes:
    """The value as LangGraph's serializer writes it in msgpack (None and bytes, which it
    stores otherwise, packed as msgpack would)."""
    type_, data = SERDE.dumps_typed(value)
    return data if type_ == "msgpack" else ormsgpack.packb(value)


def test_every_named_type_is_read_at_any_depth() -> None:
    value = {
        "messages": [HumanMessage("hi"), AIMessage("yo")],
        "deep": [{"parcel": Parcel(2)}, (Receipt(total=1.5),)],
        "when": datetime.date(2026, 1, 1),
    }
    assert named_types(blob(value)) == {
        ("langchain_core.messages.human", "HumanMessage"),
        ("langchain_core.messages.ai", "AIMessage"),
        (__name__, "Parcel"),
        (__name__, "Receipt"),
        ("datetime", "date"),
    }


plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(plain_values)
def test_plain_data_names_nothing(value: object) -> None:
    assert named_types(blob(value)) == set()


def test_bytes_that_do_not_unpack_are_undecodable() -> None:
    whole = blob({"parcel": Parcel(2), "text": "x" * 50})
    with pytest.raises(UndecodableBytes):
        named_types(whole[: len(whole) // 2])


def test_a_module_is_found_without_running_its_package(tmp_path: Path) -> None:
    """`shop.models` exists on the path; importing it would run `shop/__init__.py`,
    which raises. The finders find it anyway, and nothing ran."""
    name = f"shop_{uuid.uuid4().hex[:8]}"
    package = tmp_path / name
    package.mkdir()
    marker = tmp_path / "ran"
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit\n")
    (package / "models.py").write_text("class Order: ...\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert module_findable(f"{name}.models")
        assert not module_findable(f"{name}.gone")
        assert not module_findable(f"{name}.models.deeper")  # a module has no submodules
        assert type_status((f"{name}.models", "Order"), SAFE_TYPES) == "refused"
    finally:
        sys.path.remove(str(tmp_path))
    assert not marker.exists()
    assert name not in sys.modules and f"{name}.models" not in sys.modules


def test_a_src_layout_without_init_files_is_found_without_importing(tmp_path: Path) -> None:
    """An application in a src layout with no `__init__.py` (namespace packages, two
    deep): each package below one nobody imported is found from its parent's folders."""
    top = f"src_{uuid.uuid4().hex[:8]}"
    (tmp_path / top / "agent").mkdir(parents=True)
    (tmp_path / top / "agent" / "state.py").write_text("class Section: ...\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert module_findable(f"{top}.agent.state")
        assert not module_findable(f"{top}.agent.gone")
        assert not module_findable(f"{top}.other.state")
        assert type_status((f"{top}.agent.state", "Section"), SAFE_TYPES) == "refused"
    finally:
        sys.path.remove(str(tmp_path))
    assert top not in sys.modules and f"{top}.agent" not in sys.modules


def test_statuses() -> None:
    assert type_status(("langchain_core.messages.ai", "AIMessage"), SAFE_TYPES) == "safe"
    assert type_status((__name__, "Parcel"), SAFE_TYPES, {(__name__, "Parcel")}) == "allowed"
    assert type_status((__name__, "Gone"), SAFE_TYPES, {(__name__, "Gone")}) == "lost"
    assert type_status(("no_such_module_here", "X"), SAFE_TYPES) == "lost"
    assert type_status(("", "X"), SAFE_TYPES) == "lost"
    assert type_status(("os", "system"), SAFE_TYPES) == "refused"


@pytest.mark.parametrize(
    "module_text", ["class Other: ...\n", "raise RuntimeError('broken at import')\n"]
)
def test_one_rule_says_an_allowed_type_is_lost_to_types_the_strict_serializer_and_the_wrapper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module_text: str
) -> None:
    """An allowed class its module (not imported yet) does not define, or whose module
    fails to import, is lost wherever it is judged; not allowed, it is refused and its
    module is never run."""
    name = f"shop_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(module_text)
    monkeypatch.syspath_prepend(str(tmp_path))
    named = (name, "Order")

    assert type_status(named, SAFE_TYPES) == "refused"
    assert why_lost(named, allowed=False) is None
    assert name not in sys.modules  # judged without running it

    reason = lost_reason(named, {named})
    assert reason is not None
    assert type_status(named, SAFE_TYPES, {named}) == "lost"
    assert StrictSerializer([named]).lost == {named}
    assert why_lost(named, allowed=True) == reason


def test_findings_of_stored_values() -> None:
    gone = ormsgpack.Ext(2, ormsgpack.packb(["gone_module_here", "Order", {"sku": "a"}]))
    values = [
        StoredValue("messages", "msgpack", blob([HumanMessage("hi")])),
        StoredValue("order", "msgpack", ormsgpack.packb({"o": gone})),
        StoredValue("cut", "msgpack", blob({"k": "v" * 40})[:9]),
        StoredValue("text", "msgpack", blob("a\x00b"), task_id="t1", idx=0),
        StoredValue("text", "msgpack", blob("a\x00b")),  # a channel value: a blob, harmless
        StoredValue("raw", "bytes", b"\x00\x01"),
        StoredValue("odd", "pickle", b"\x80\x04"),
    ]
    found = inspect_values(values, TRUST, SERDE.loads_typed, nul_matters=True)
    assert [(f.code, f.channel, f.task_id, f.type_name) for f in found] == [
        ("lost_type", "order", None, "gone_module_here:Order"),
        ("undecodable", "cut", None, None),
        ("nul_text", "text", "t1", None),
        ("undecodable", "odd", None, None),
    ]
    assert "Unknown serialization type" in str(found[-1].error)
    on_sqlite = inspect_values(values, TRUST, SERDE.loads_typed, nul_matters=False)
    assert "nul_text" not in {f.code for f in on_sqlite}
    assert [suspect(v, TRUST, SERDE.loads_typed, True) for v in values] == [
        False, True, True, True, False, False, True,
    ]  # fmt: skip


def test_nul_counts_only_in_text() -> None:
    assert nul_in_text(blob("a\x00"))
    assert not nul_in_text(blob(b"a\x00"))
    assert not nul_in_text(blob(["a\x00"]))  # not stored inline: PostgreSQL keeps it as bytes
    assert not nul_in_text(b"\xc1")
