"""U+0000 in stored text: PostgreSQL refuses it in `text` and JSONB columns
(`unsupported Unicode escape sequence`), so a string holding it can never be stored
there. These are the pure rules that make such text storable."""

from __future__ import annotations

from typing import Any

from ..codes import NUL_MODES, NulMode

NUL = "\x00"
REPLACEMENT = "\ufffd"
"""What a U+0000 becomes by default: the Unicode replacement character."""


def scrub_nul(text: str, mode: NulMode = "replace") -> str:
    """The text with each U+0000 replaced by U+FFFD (`replace`) or removed (`strip`);
    the same object when it holds none."""
    if NUL not in text:
        return text
    if mode not in NUL_MODES:
        raise ValueError(f"nul mode must be one of {NUL_MODES}, not {mode!r}")
    return text.replace(NUL, REPLACEMENT if mode == "replace" else "")


def holds_nul(value: Any) -> bool:
    """Whether a value holds U+0000 in any string of it (keys included), at any depth."""
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(holds_nul(item) for item in value)
    return False
