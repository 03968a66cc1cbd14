"""What the batch job makes of a head's stored bytes (`docs/how-to/unreadable-threads.md`): the
pure part shared by the sync and async runs. The stores read the bytes (`stored_values`);
`decoding.integrity` finds what is wrong with them."""

from __future__ import annotations

import os
import traceback
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import ormsgpack
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..decoding.integrity import Finding, StoredValue, inspect_values, trust_of
from ..decoding.names import OPTION, TypeName, type_text
from ..decoding.nul import NUL
from ..decoding.rename import rename_types
from ..decoding.strict import StrictSerializer
from ..engine import RepairAction
from ..redact import one_line
from .plan import Assessment, Status, tuple_key

SERIALIZER_FOLDERS = (
    os.path.join("langgraph", "checkpoint", "serde", ""),
    os.path.join("langgraph_checkpoint_repair", "decoding", ""),
)
"""Where a serializer's code lives: LangGraph's, and ours that wrap it."""


def decode_error(error: BaseException) -> bool:
    """Whether a load failed inside the serializer, on the bytes themselves (not the
    store, not a parent chain): the only sign a saver's API gives. ormsgpack's decode
    error is a plain ValueError, so the class alone cannot tell."""
    trace = traceback.extract_tb(error.__traceback__)
    return any(folder in frame.filename for frame in trace for folder in SERIALIZER_FOLDERS)


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


def as_stored(blob: bytes) -> Any:
    """A msgpack value as plain data whose extensions stay the bytes they were
    (`ormsgpack.Ext`): written again by LangGraph's serializer it gives back the same
    bytes, and nothing it names is imported or built."""
    return ormsgpack.unpackb(blob, ext_hook=ormsgpack.Ext, option=OPTION)


def moved_types_repair(
    tup: CheckpointTuple,
    findings: Sequence[Finding],
    values: Sequence[StoredValue],
    moved: Mapping[TypeName, TypeName],
    status: Status,
) -> Assessment | None:
    """The `type_moved` repair of a head whose lost types all have a new name, on
    channel values (a pending write belongs to its checkpoint: it is reported, never
    carried); None when it has no lost type or one without a mapping. Every channel
    value of the head is written back as stored, the renamed ones under new versions."""
    lost = [finding for finding in findings if finding.code == "lost_type"]
    if not lost or not all(_renamable(finding, moved) for finding in lost):
        return None
    kept = {
        value.channel: value.blob
        for value in values
        if value.task_id is None and value.type == "msgpack" and value.blob and value.channel
    }
    renamed = {finding.channel for finding in lost}
    if not renamed <= kept.keys():
        return None  # found in a value that is not the channel's own (the whole checkpoint)
    stored = {name: as_stored(rename_types(blob, moved) if name in renamed else blob)
              for name, blob in kept.items()}  # fmt: skip
    actions = {
        name: tuple(_moved_action(f, moved) for f in lost if f.channel == name) for name in renamed
    }
    key = tuple_key(tup)
    return Assessment(
        *key, status=status, broken=False, actions=actions, findings=tuple(findings),
        stored_as_is=stored, repaired={name: stored[name] for name in renamed},
    )  # fmt: skip


def _renamable(finding: Finding, moved: Mapping[TypeName, TypeName]) -> bool:
    if finding.task_id is not None or not finding.channel or finding.type_name is None:
        return False
    module, _, name = finding.type_name.partition(":")
    return (module, name) in moved


def _moved_action(finding: Finding, moved: Mapping[TypeName, TypeName]) -> RepairAction:
    module, _, name = str(finding.type_name).partition(":")
    new = type_text(moved[(module, name)])
    return RepairAction("type_moved", None, None, 0, f"{finding.type_name} -> {new}")
