"""Thread stores for the batch job: one driver folder per store (`postgres`, `sqlite`,
`generic` for any saver), found through one registry (`drivers`); the store protocol
(`base`), the first look at stored histories (`first_look`) and a saver's stored
delta history read so that it ends (`history`). Names load on first use: opening a
TARGET's errors (`opening_errors`) must not import LangGraph for `--help`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .base import AsyncThreadStore as AsyncThreadStore
    from .base import Head as Head
    from .base import RepairEntry as RepairEntry
    from .base import Selection as Selection
    from .base import StoreNotReady as StoreNotReady
    from .base import ThreadStore as ThreadStore
    from .drivers import astore_for as astore_for
    from .drivers import store_for as store_for
    from .drivers import stored_saver as stored_saver
    from .generic import AsyncGenericStore as AsyncGenericStore
    from .generic import GenericStore as GenericStore


__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".base": (
            "AsyncThreadStore",
            "Head",
            "RepairEntry",
            "Selection",
            "StoreNotReady",
            "ThreadStore",
        ),
        ".generic": ("AsyncGenericStore", "GenericStore"),
        ".drivers": ("astore_for", "store_for", "stored_saver"),
    },
)
