"""Delta message channels: rebuilt from a history as LangGraph replays them, and
repaired ones re-snapshotted (`channels`); what makes a parent chain one that ends
(`chains`). Reading the history from a store is `stores.history`'s."""

from .channels import (
    COUNTERS_KEY,
    appended_messages,
    as_snapshot,
    counters_after_snapshot,
    delta_channel_names,
    is_snapshot,
    messages_reducer,
    rebuild_messages,
    replayed,
    snapshot_value,
)

__all__ = [
    "COUNTERS_KEY",
    "appended_messages",
    "as_snapshot",
    "counters_after_snapshot",
    "delta_channel_names",
    "is_snapshot",
    "messages_reducer",
    "rebuild_messages",
    "replayed",
    "snapshot_value",
]
