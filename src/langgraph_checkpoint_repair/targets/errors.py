"""What goes wrong opening a TARGET: one line each, meant for a person. A driver's own
failures are `TargetError`s too (`stores.opening_errors`)."""

from __future__ import annotations

from ..stores.opening_errors import TargetError, needs_extra


class AsyncFactory(TargetError):
    """A `module:attr` factory that must be awaited or entered with `async with`:
    `open_saver` refuses it before calling anything; `aopen_saver` opens it."""


__all__ = ["AsyncFactory", "TargetError", "needs_extra"]
