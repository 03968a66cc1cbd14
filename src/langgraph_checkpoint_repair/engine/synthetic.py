"""Synthetic tool results: how they are built, named and recognised."""

from __future__ import annotations

import functools
import string
from collections.abc import Callable

from langchain_core.messages import BaseMessage, ToolMessage

from .policy import Filler

MARKER_KEY = "langgraph_checkpoint_repair"
"""Key in `response_metadata` that marks a ToolMessage as written by this library."""


def is_synthetic(message: BaseMessage) -> bool:
    """True for a result this library made up, which any real result outranks."""
    metadata = message.response_metadata
    return bool(metadata) and isinstance(metadata.get(MARKER_KEY), dict)


def placeholder_id(call_id: str, ai_id: str | None, ai_index: int, taken: set[str]) -> str:
    """A deterministic message id, unique among the synthetic results of one repair.

    It names the call and its AIMessage: the message's id, or its position
    when it has none, so `call_0` reused every turn still gives distinct ids
    (LangGraph's `add_messages` would merge two results sharing an id). The
    id joins `taken`; a clash (two AI messages sharing an id) adds the position.
    """
    candidate = base = f"repair-{call_id}-{ai_id or ai_index}"
    if candidate in taken:
        candidate = base = f"{base}-{ai_index}"
        n = 2
        while candidate in taken:
            candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


_TEMPLATE = ToolMessage(
    content="", tool_call_id="", name="", status="error", id="", response_metadata={}
)
_TEMPLATE_FIELDS = dict(vars(_TEMPLATE))
_TEMPLATE_FIELDS_SET = set(_TEMPLATE.model_fields_set)
_new_tool_message = ToolMessage.__new__
_set = object.__setattr__


def synthetic_result(
    text: str, call_id: str, name: str, message_id: str, reason: str
) -> ToolMessage:
    """The marked error result answering `call_id`.

    Equal to `ToolMessage(content=text, tool_call_id=call_id, name=name,
    status="error", id=message_id, response_metadata=...)` (the tests hold it
    to that), built as pydantic's own `model_construct` builds a model: every
    value is a plain string made here, so validating it again would only cost
    time, four times as much, on every dangling call of a broken store.
    """
    fields = _TEMPLATE_FIELDS.copy()
    fields["content"] = text
    fields["tool_call_id"] = call_id
    fields["name"] = name
    fields["id"] = message_id
    fields["additional_kwargs"] = {}
    fields["response_metadata"] = {MARKER_KEY: {"synthetic": True, "reason": reason}}
    result = _new_tool_message(ToolMessage)
    _set(result, "__dict__", fields)
    _set(result, "__pydantic_fields_set__", _TEMPLATE_FIELDS_SET.copy())
    _set(result, "__pydantic_extra__", {})
    _set(result, "__pydantic_private__", None)
    return result


Maker = Callable[[str, str, str], ToolMessage]
"""(call id, name, message id) -> the synthetic result, for one reason."""


def result_maker(template: str, reason: str, fill: Filler) -> Maker:
    """`synthetic_result` for one reason, in one call, its content `template`
    filled as `fill` fills it.

    A broken store has one dangling call in every few turns, and each costs
    what building its result costs, so what can be is done once here: the
    template's lookups, and the template split around `{name}` and `{id}`
    when it has just those, in that order (as the default texts do), to be
    joined as an f-string joins: that formats each value exactly as
    `str.format` does, at a third of the cost. The result is the same as
    `synthetic_result`'s.
    """
    pieces = _name_then_id(template)
    head, middle, tail = pieces or ("", "", "")
    by_pieces = pieces is not None
    fields_template, fields_set = _TEMPLATE_FIELDS, _TEMPLATE_FIELDS_SET
    new, set_slot, tool_message, marker_key = _new_tool_message, _set, ToolMessage, MARKER_KEY

    def make(call_id: str, name: str, message_id: str) -> ToolMessage:
        fields = fields_template.copy()
        if by_pieces:
            fields["content"] = f"{head}{name}{middle}{call_id}{tail}"
        else:
            fields["content"] = fill(name, call_id, reason)
        fields["tool_call_id"] = call_id
        fields["name"] = name
        fields["id"] = message_id
        fields["additional_kwargs"] = {}
        fields["response_metadata"] = {marker_key: {"synthetic": True, "reason": reason}}
        result = new(tool_message)
        set_slot(result, "__dict__", fields)
        set_slot(result, "__pydantic_fields_set__", fields_set.copy())
        set_slot(result, "__pydantic_extra__", {})
        set_slot(result, "__pydantic_private__", None)
        return result

    return make


@functools.lru_cache(maxsize=64)
def _name_then_id(template: str) -> tuple[str, str, str] | None:
    """(text before `{name}`, between it and `{id}`, after) when the template has
    just those two fields, in that order, without format specs or conversions;
    else None."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    literals, fields = [""], []
    for literal, field, spec, conversion in parsed:
        literals[-1] += literal
        if field is not None:
            if spec or conversion:
                return None
            fields.append(field)
            literals.append("")
    if fields != ["name", "id"]:
        return None
    return literals[0], literals[1], literals[2]
