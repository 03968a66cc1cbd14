"""Reading a thread's history: delta message channels rebuilt as LangGraph replays them
and repaired ones re-snapshotted (`channels`), walking only parent chains that end
(`chains`)."""

from .channels import (
    COUNTERS_KEY,
    aload_rebuilt,
    appended_messages,
    aread_rebuilt,
    as_snapshot,
    counters_after_snapshot,
    delta_channel_names,
    is_snapshot,
    load_rebuilt,
    messages_reducer,
    read_rebuilt,
    rebuild_messages,
    snapshot_value,
)

__all__ = [
    "COUNTERS_KEY",
    "aload_rebuilt",
    "appended_messages",
    "aread_rebuilt",
    "as_snapshot",
    "counters_after_snapshot",
    "delta_channel_names",
    "is_snapshot",
    "load_rebuilt",
    "messages_reducer",
    "read_rebuilt",
    "rebuild_messages",
    "snapshot_value",
]
