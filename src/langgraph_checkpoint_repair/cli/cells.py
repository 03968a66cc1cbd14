"""Text for table cells: one line, whatever the data holds (tabs, newlines, control
characters, very long ids). Width is left to Rich, which measures CJK as two cells."""

from __future__ import annotations

import re

_BREAKS = re.compile(r"[\s\x00-\x1f\x7f]+")


def one_line(text: str, limit: int | None = None) -> str:
    """`text` with every run of whitespace or control characters as one space; cut to
    `limit` characters with an ellipsis."""
    flat = _BREAKS.sub(" ", text).strip()
    if limit is not None and len(flat) > limit:
        return flat[: limit - 1] + "…"
    return flat
