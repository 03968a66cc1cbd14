"""`migrate`: the audit tables a store needs before a run writes into it."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ..stores import store_for


def migrate(saver: BaseCheckpointSaver[Any]) -> list[str] | None:
    """Apply the audit-table migrations the store still lacks; return their names.

    None when the store keeps its audit in checkpoint metadata (SQLite, any saver).
    """
    store = store_for(saver)
    apply: Any = getattr(store, "migrate", None)
    return None if apply is None else list(apply())
