"""No copy of removed media may stay elsewhere in the message: converters and
providers leave the same bytes in `additional_kwargs` (and metadata)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

SCRUBBED = "[removed]"
MIN_PAYLOAD = 64
FIELDS = ("additional_kwargs", "response_metadata", "artifact")


def scrubbed_fields(message: BaseMessage, payloads: Sequence[str]) -> dict[str, Any]:
    """The message's other fields that hold any of `payloads`, with it replaced."""
    changed: dict[str, Any] = {}
    for field in FIELDS:
        value = getattr(message, field, None)
        if value is None:
            continue
        cleaned = _scrubbed(value, payloads)
        if cleaned is not value:
            changed[field] = cleaned
    return changed


def _holds(text: str, payload: str) -> bool:
    """A short payload only matches whole: a few base64 characters occur anywhere."""
    return text == payload or (len(payload) >= MIN_PAYLOAD and payload in text)


def _scrubbed(value: Any, payloads: Sequence[str]) -> Any:
    """`value` with every string holding a payload replaced; the same object if none."""
    if isinstance(value, str):
        return SCRUBBED if any(_holds(value, p) for p in payloads) else value
    if isinstance(value, dict):
        items = {k: _scrubbed(v, payloads) for k, v in value.items()}
        return items if any(items[k] is not value[k] for k in value) else value
    if isinstance(value, (list, tuple)):
        items_list = [_scrubbed(v, payloads) for v in value]
        if all(a is b for a, b in zip(items_list, value, strict=True)):
            return value
        return type(value)(items_list)
    return value
