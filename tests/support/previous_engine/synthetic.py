"""Synthetic tool results: how they are built, named and recognised."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, ToolMessage

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
