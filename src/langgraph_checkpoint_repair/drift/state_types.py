"""The classes an application's graph declares in its state: the fields of its state
schemas (state, input, output, each node's) and the classes nested in them, however
deep (`list[Section]`, `Optional[Plan]`, a model's own fields).

Strict loading builds only LangGraph's and LangChain's own types, because a stored name
is data anyone who can write a row controls. A class the operator's own graph declares
in its state is different: the operator chose to run that code by naming the graph, and
the application builds those classes from the same rows on every load. So with
`--graph` they load as they do in the application; any other stored type still needs
`--allow-type`.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any

TypeName = tuple[str, str]

OWN_MODULES = ("builtins", "typing", "collections", "datetime", "decimal", "uuid", "enum")
"""Modules whose classes are plain data or LangGraph's safe set already."""


def state_types(graph: Any) -> frozenset[TypeName]:
    """(module, name) of each class the compiled graph's state schemas name."""
    found: dict[type, None] = {}
    for schema in _schemas(graph):
        for annotation in _field_annotations(schema):
            _collect(annotation, found)
    return frozenset((cls.__module__, cls.__name__) for cls in found if _trustable(cls))


def _schemas(graph: Any) -> list[Any]:
    builder = getattr(graph, "builder", None)
    schemas = getattr(builder, "schemas", None)
    if isinstance(schemas, dict):
        return list(schemas)
    state = getattr(builder, "state_schema", None)
    return [state] if state is not None else []


def _field_annotations(schema: Any) -> list[Any]:
    """The annotations of a TypedDict's, a dataclass's or a pydantic model's fields."""
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, dict):
        return [getattr(f, "annotation", None) for f in fields.values()]
    try:
        return list(typing.get_type_hints(schema, include_extras=True).values())
    except Exception:  # a forward reference the module cannot resolve: nothing from it
        return []


def _collect(annotation: Any, found: dict[type, None]) -> None:
    for cls in _classes_in(annotation):
        if cls in found:
            continue
        found[cls] = None
        if _has_fields(cls):
            for inner in _field_annotations(cls):
                _collect(inner, found)


def _classes_in(annotation: Any) -> Iterator[type]:
    """The classes an annotation names: itself, or its arguments (`list[X]`,
    `Annotated[X, reducer]`, `X | None`), recursively."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        yield from _classes_in(argument)


def _has_fields(cls: type) -> bool:
    return hasattr(cls, "model_fields") or dataclasses.is_dataclass(cls) or typing.is_typeddict(cls)


def _trustable(cls: type) -> bool:
    """An application's class: not plain data, not LangGraph's or LangChain's own."""
    module = cls.__module__ or ""
    top = module.partition(".")[0]
    if module in OWN_MODULES or top in ("langgraph", "langchain_core", "pydantic"):
        return False
    return not typing.is_typeddict(cls)  # a TypedDict is stored as a plain dict
