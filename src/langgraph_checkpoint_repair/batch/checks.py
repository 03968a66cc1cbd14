"""Checks of `RunOptions` values: a wrong type or value is a clear TypeError or
ValueError when the options are made, never a silent fallback mid-run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any


def names(field: str, value: Any) -> tuple[str, ...]:
    """A sequence of names as a tuple; a bare string would match by substring."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, set, frozenset)):
        raise TypeError(f"{field} must be a sequence of strings, not {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise TypeError(f"{field} must be a sequence of strings, not {value!r}")
    return tuple(value)


def idle_time(value: Any, started: datetime) -> timedelta:
    """A timedelta, or a number of seconds; non-negative and usable as a cut-off."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError(f"min_idle must be a finite number of seconds, not {value!r}")
        try:
            value = timedelta(seconds=value)
        except OverflowError:
            raise ValueError(f"min_idle is too long: {value!r} seconds") from None
    if not isinstance(value, timedelta):
        raise TypeError(f"min_idle must be a timedelta or a number of seconds, not {value!r}")
    if value < timedelta(0):
        raise ValueError(f"min_idle must not be negative, not {value}")
    try:
        started - value
    except OverflowError:
        raise ValueError(f"min_idle is too long: {value}") from None
    return value


def whole(field: str, value: Any, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be a whole number, not {value!r}")
    if value < least:
        raise ValueError(f"{field} must be at least {least}, not {value}")


def rate(value: Any) -> None:
    """A positive, finite number of writes per second whose interval is finite too."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"max_writes_per_second must be a number, not {value!r}")
    if not (math.isfinite(value) and value > 0 and math.isfinite(1.0 / value)):
        raise ValueError(f"max_writes_per_second must be positive and finite, not {value!r}")


def shard(value: Any) -> None:
    if value is None:
        return
    if not (isinstance(value, tuple) and len(value) == 2):
        raise TypeError(f"shard must be a (K, N) tuple, not {value!r}")
    whole("shard K", value[0], 0)
    whole("shard N", value[1], 1)
    if not value[0] < value[1]:
        raise ValueError("shard must be K/N with 0 <= K < N")
