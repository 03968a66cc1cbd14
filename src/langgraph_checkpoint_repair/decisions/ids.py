"""Checkpoint ids that sort right after their parent.

Every saver picks a thread's head as its greatest checkpoint id, and LangGraph's
ids are time-ordered UUIDs. A repair written with a fresh id would sort after
an application checkpoint that landed on the same parent a moment earlier and
hide it. The id right after the parent's instead sorts before anything written
after the parent, so the application's write stays the head; and two runs
repairing the same head compute the same id, so they can never leave two
different checkpoints for it.
"""

from __future__ import annotations

import uuid

from langgraph.checkpoint.base.id import uuid6

_FIXED = (0xF << 76) | (0x3 << 62)
"""The version nibble and the variant bits: the same in an id and its successor."""
_LOW = 62  # bits below the variant
_MID = 12  # bits between the variant and the version


def id_after(checkpoint_id: str, step: int) -> str:
    """The smallest UUID of the same version and variant that sorts after `checkpoint_id`.

    An id that is not a UUID (or the very last one) gets a fresh time-ordered id,
    as LangGraph writes them.
    """
    try:
        value = uuid.UUID(checkpoint_id).int
    except ValueError:
        return str(uuid6(clock_seq=step))
    following = _spread(_counter(value) + 1) | (value & _FIXED)
    if following >> 128:
        return str(uuid6(clock_seq=step))
    return str(uuid.UUID(int=following))


def _counter(value: int) -> int:
    """The 122 free bits of a UUID as one number, in the order they sort."""
    low = value & ((1 << _LOW) - 1)
    mid = (value >> 64) & ((1 << _MID) - 1)
    high = value >> 80
    return (high << (_MID + _LOW)) | (mid << _LOW) | low


def _spread(counter: int) -> int:
    """The inverse of `_counter`, with the fixed bits left zero."""
    low = counter & ((1 << _LOW) - 1)
    mid = (counter >> _LOW) & ((1 << _MID) - 1)
    high = counter >> (_MID + _LOW)
    return (high << 80) | (mid << 64) | low


def id_before(checkpoint_id: str) -> str | None:
    """The greatest UUID of the same version and variant that sorts before
    `checkpoint_id`; None for an id that is not a UUID (or the very first one)."""
    try:
        value = uuid.UUID(checkpoint_id).int
    except ValueError:
        return None
    counter = _counter(value)
    if counter == 0:
        return None
    return str(uuid.UUID(int=_spread(counter - 1) | (value & _FIXED)))
