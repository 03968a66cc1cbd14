"""What goes wrong opening a store: one line each, meant for a person."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class TargetError(Exception):
    """A TARGET that cannot be opened; the message is one line meant for a person."""


@contextlib.contextmanager
def needs_extra(extra: str) -> Iterator[None]:
    """Turn a missing optional dependency into a one-line hint (wraps imports only)."""
    try:
        yield
    except ImportError as error:
        raise TargetError(
            f"{extra} targets need the {extra} extra: "
            f"pip install 'langgraph-checkpoint-repair[{extra}]' ({error})"
        ) from None
