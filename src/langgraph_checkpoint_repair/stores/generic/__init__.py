"""The generic driver: any saver, through the public saver API alone (`store`), and its
parent-chain checks (`chains`: the in-memory saver's dict, the base class's walk)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .store import AsyncGenericStore as AsyncGenericStore
    from .store import GenericStore as GenericStore
    from .store import NoStoredBytes as NoStoredBytes

__all__, __getattr__, __dir__ = lazy_exports(
    __name__, {".store": ("AsyncGenericStore", "GenericStore", "NoStoredBytes")}
)
