"""The types a stored msgpack blob names, read without importing or building anything.

LangGraph's serializer stores an object as a msgpack extension whose payload
starts with the module and class that rebuild it (`jsonplus._msgpack_default`).
Reading those names needs only the bytes: each extension's payload is unpacked
into plain data and nothing it names is imported. This is what strict loading,
the `types` inventory and the integrity findings all read.
"""

from __future__ import annotations

import contextlib
from typing import Any

import ormsgpack

from ..redact import one_line

TypeName = tuple[str, str]
"""(module, class name), as a stored extension names it."""

SINGLE_ARG, POS_ARGS, KW_ARGS, METHOD, PYDANTIC_V1, PYDANTIC_V2, NUMPY, SNAPSHOT = range(8)
"""LangGraph's extension codes (`jsonplus.EXT_*`)."""
CONSTRUCTORS = frozenset({SINGLE_ARG, POS_ARGS, KW_ARGS, PYDANTIC_V1, PYDANTIC_V2})
OPTION = ormsgpack.OPT_NON_STR_KEYS


class UndecodableBytes(ValueError):
    """Stored bytes the serializer cannot decode at all; the message is its one line."""


def ext_name(code: int, payload: Any) -> tuple[str, ...] | None:
    """(module, name) of a constructor extension's unpacked payload, (module, name,
    method) of a method one; None for anything else."""
    if not isinstance(payload, (list, tuple)):
        return None
    if code in CONSTRUCTORS and len(payload) >= 3:
        return (str(payload[0]), str(payload[1]))
    if code == METHOD and len(payload) >= 4:
        return (str(payload[0]), str(payload[1]), str(payload[3]))
    return None


def type_text(named: tuple[str, ...]) -> str:
    """`module:Name` (`module:Name.method` for a method) as the operator writes it."""
    module, name, *method = named
    return f"{module}:{name}" + "".join(f".{m}" for m in method)


def named_types(blob: bytes) -> set[tuple[str, ...]]:
    """Every type the blob names, at any depth. An extension whose payload does not
    unpack names nothing (LangGraph's own decode makes it None); bytes that do not
    unpack at all raise `UndecodableBytes`."""
    found: set[tuple[str, ...]] = set()

    def look(code: int, data: bytes) -> None:
        with contextlib.suppress(Exception):
            named = ext_name(code, ormsgpack.unpackb(data, ext_hook=look, option=OPTION))
            if named is not None:
                found.add(named)
        return None

    try:
        ormsgpack.unpackb(blob, ext_hook=look, option=OPTION)
    except Exception as error:
        raise UndecodableBytes(one_line(error)) from error
    return found


def channel_blobs(checkpoint_blob: bytes) -> dict[str, bytes] | None:
    """Each channel's value cut out of a whole stored checkpoint (as SQLite stores one)
    as a msgpack blob of its own, its extensions kept as they were stored; None when
    the checkpoint does not read as one."""
    try:
        whole = ormsgpack.unpackb(checkpoint_blob, ext_hook=ormsgpack.Ext, option=OPTION)
        values = whole["channel_values"]
        return {str(name): ormsgpack.packb(value, option=OPTION) for name, value in values.items()}
    except Exception:
        return None
