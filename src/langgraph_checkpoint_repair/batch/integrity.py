"""What the batch job makes of a head's stored bytes (DESIGN s17): the pure part
shared by the sync and async runs. The stores read the bytes (`stored_values`);
`decoding.integrity` finds what is wrong with them."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

import ormsgpack
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..decoding.integrity import NUL, Finding, StoredValue, inspect_values, trust_of
from ..decoding.names import one_line
from ..decoding.strict import StrictSerializer
from ..stores.plan import Assessment


def decode_error(error: BaseException) -> bool:
    """Whether a load failed on the bytes themselves (not the store, not our code)."""
    if isinstance(error, (ormsgpack.MsgpackDecodeError, json.JSONDecodeError, UnicodeError)):
        return True
    return isinstance(error, NotImplementedError) and "serialization type" in str(error)


def unreadable(
    key: tuple[str, str, str],
    values: Sequence[StoredValue] | None,
    error: Exception,
    serde: SerializerProtocol,
    nul_matters: bool,
) -> Assessment | None:
    """The assessment of a head whose load failed on its bytes, naming each value that
    does not decode; None when the failure is not the bytes' (the run reports it)."""
    if values is None:  # only the saver's API: the error itself must say it
        found = [Finding("undecodable", "", error=one_line(error))] if decode_error(error) else []
    else:
        findings = inspect_values(values, trust_of(serde), serde.loads_typed, nul_matters)
        found = [f for f in findings if f.code == "undecodable"]
    if not found:
        return None
    return Assessment(*key, status="unreadable", broken=False, findings=tuple(found))


def needs_inspection(
    tup: CheckpointTuple, refused: Collection[str], serde: SerializerProtocol, nul_matters: bool
) -> bool:
    """Whether a loaded head's bytes are worth reading again: the strict serializer
    refused a type (lost, perhaps), a pending write holds text PostgreSQL refuses, or
    the saver's own serializer, which tells nothing of what it could not build."""
    if refused or not isinstance(serde, StrictSerializer):
        return True
    return nul_matters and any(_nul_text(value) for _, _, value in tup.pending_writes or ())


def _nul_text(value: Any) -> bool:
    return isinstance(value, str) and NUL in value


def findings_of(
    values: Sequence[StoredValue] | None,
    refused: Collection[str],
    serde: SerializerProtocol,
    nul_matters: bool,
) -> tuple[Finding, ...]:
    """The findings of a loaded head. Where the store shows no bytes, a lost type the
    strict serializer refused is still named, without a place."""
    trust = trust_of(serde)
    if values is not None:
        return tuple(inspect_values(values, trust, serde.loads_typed, nul_matters))
    lost = (name.rpartition(".") for name in sorted(refused))
    return tuple(
        Finding("lost_type", "", type_name=f"{module}:{name}")
        for module, _, name in lost
        if trust.lost((module, name))
    )
