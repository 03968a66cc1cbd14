"""The values `langgraph-repair`'s options take, checked as argparse reads them (each a
`type=`): a mistake is one line naming what was expected. Standard library only, as
`arguments` needs; what checks a value further is imported when one is read."""

from __future__ import annotations

import argparse
import re
from datetime import datetime, timedelta, timezone

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> timedelta:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (try 10m, 90s, 2h, 0)")
    from ..batch import checks

    try:
        return checks.idle_time(
            float(match[1]) * _UNITS[match[2] or "s"], datetime.now(timezone.utc)
        )
    except ValueError:
        raise argparse.ArgumentTypeError(f"duration too long: {text!r}") from None


def rate(text: str) -> float:
    from ..batch import checks

    try:
        value = float(text)
        checks.rate(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a positive, finite rate: {text!r} (writes per second, e.g. 5 or 0.5)"
        ) from None
    return value


def shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise argparse.ArgumentTypeError(f"not a shard: {text!r} (K/N with 0 <= K < N)")
    return int(match[1]), int(match[2])


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)
