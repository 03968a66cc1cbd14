"""The knobs of a `RepairPolicy` that the engine never reads: what a load does with a
type it cannot rebuild (the wrapper's loader), what the batch job does with text
holding U+0000 (the stores), and whether a human's stale answer is left out (the
loader and the stores). `RepairPolicy` inherits them, so a user still writes one
policy; the rooms that read them ask for a `StoragePolicy`."""

from __future__ import annotations

from dataclasses import dataclass

from .codes import LOST_TYPES, NUL_MODES, STALE_RESUMES, LostTypes, NulMode, StaleResume


@dataclass(frozen=True, kw_only=True)
class StoragePolicy:
    """The knobs the loader and the stores read (keywords of a `RepairPolicy`).

    - `lost_types`: what a load does when a stored value names a type this
      environment cannot rebuild (its module or class gone): `"log"` (a warning
      per load, naming the type and the thread; the load goes on as LangGraph's
      does) or `"raise"` (`UnreadableCheckpoint`).
    - `nul_text`: what the batch job does with U+0000 in a pending write's text on
      PostgreSQL, which refuses it: `"replace"` (each becomes U+FFFD) or `"strip"`
      (each is removed). The write is rewritten in place, audited and undoable.
    - `stale_resume`: what happens to a human's answer that LangGraph would hand to
      the thread's next question (`stale_answers`): `"drop"` leaves it out of what a
      load returns (so LangGraph asks again) and lets the batch job delete it, audited
      and undoable; `"keep"` leaves it as stored.
    """

    lost_types: LostTypes = "log"
    nul_text: NulMode = "replace"
    stale_resume: StaleResume = "drop"

    def __post_init__(self) -> None:
        for name, allowed in (
            ("lost_types", LOST_TYPES),
            ("nul_text", NUL_MODES),
            ("stale_resume", STALE_RESUMES),
        ):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"RepairPolicy.{name} must be one of {allowed}, not {value!r}")
            if value not in allowed:
                raise ValueError(f"RepairPolicy.{name} must be one of {allowed}, not {value!r}")
