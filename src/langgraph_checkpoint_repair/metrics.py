"""Repair counts on OpenTelemetry metrics, when the application has OpenTelemetry.

The meter `langgraph_checkpoint_repair` holds four counters:
`langgraph_repair.repairs` (one per repaired channel of a load, a batch head or a
model call; attributes `surface` and `channel`), `langgraph_repair.actions`
(one per action; attributes `action`, `surface`, `channel`),
`langgraph_repair.lost_types` (one per type a load met that cannot be rebuilt
here; attribute `surface`) and `langgraph_repair.pruned_rows` (one per row a prune
deleted; attributes `table` and `surface`: `batch` for `prune`, `wrapper` for the
wrapper's `prune`/`aprune`), and one gauge, `langgraph_repair.waiting_heads`: the heads
waiting on a human the last whole `scan --waiting` (or `scan --json`) found, by age
(attribute `idle`: under_1h, 1h_to_1d, 1d_to_7d, 7d_or_more, unknown; and `shard`,
K/N, for a run over one shard). Attributes take
bounded values only: thread ids go to the log records, never here.

OpenTelemetry is looked for once, at the first repair recorded, and imported only
if installed; without it, recording costs one check of a module flag. The
counters come from the global meter provider at that first record, and the
OpenTelemetry API's proxy meter hands them on to a provider the application sets
later. Recording never raises: a failure here must not undo a repair.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .compatibility.features import installed_version
from .engine import RepairAction

Surface = Literal["load", "batch", "in_run", "wrapper"]

METER = "langgraph_checkpoint_repair"
REPAIRS = "langgraph_repair.repairs"
ACTIONS = "langgraph_repair.actions"
LOST_TYPES = "langgraph_repair.lost_types"
PRUNED_ROWS = "langgraph_repair.pruned_rows"
WAITING_HEADS = "langgraph_repair.waiting_heads"
IDLE_BUCKETS = ("under_1h", "1h_to_1d", "1d_to_7d", "7d_or_more", "unknown")
_DISTRIBUTION = "langgraph-checkpoint-repair"

logger = logging.getLogger("langgraph_checkpoint_repair")

_absent = False
"""Set once OpenTelemetry was looked for and not found (or failed to start)."""
_counters: tuple[Any, Any, Any, Any] | None = None
"""The repairs, actions, lost types and pruned rows counters, made at the first record."""
_starting = threading.Lock()
_waiting: dict[tuple[tuple[str, str], ...], int] = {}
"""The gauge's values as of the last whole run, by their attributes."""


def record_repairs(surface: Surface, actions: Mapping[str, Sequence[RepairAction]]) -> None:
    """Count one repair per channel in `actions` and each of its actions, on `surface`."""
    if _absent:
        return
    try:
        counters = _counters or _start()
        if counters is None:
            return
        repairs, by_action, *_ = counters
        for channel, acts in actions.items():
            repairs.add(1, {"surface": surface, "channel": channel})
            for kind, count in Counter(action.kind for action in acts).items():
                by_action.add(count, {"action": kind, "surface": surface, "channel": channel})
    except Exception:
        logger.debug("could not record repair metrics", exc_info=True)


def record_lost_types(surface: Surface, count: int) -> None:
    """Count `count` types met on `surface` that cannot be rebuilt here."""
    if _absent or count <= 0:
        return
    try:
        counters = _counters or _start()
        if counters is not None:
            counters[2].add(count, {"surface": surface})
    except Exception:
        logger.debug("could not record lost type metrics", exc_info=True)


def record_pruned(surface: Surface, rows: Mapping[str, int]) -> None:
    """Count the rows a prune deleted (table -> rows), on `surface`."""
    if _absent or not any(rows.values()):
        return
    try:
        counters = _counters or _start()
        if counters is not None:
            for table, count in rows.items():
                if count:
                    counters[3].add(count, {"table": table, "surface": surface})
    except Exception:
        logger.debug("could not record pruned rows", exc_info=True)


def record_waiting(by_age: Mapping[str, int], shard: tuple[int, int] | None = None) -> None:
    """Set the waiting-heads gauge to `by_age` (bucket -> heads), every bucket given,
    so a bucket emptied since the last run reads 0."""
    if _absent:
        return
    try:
        if (_counters or _start()) is None:
            return
        scope = () if shard is None else (("shard", f"{shard[0]}/{shard[1]}"),)
        for bucket in IDLE_BUCKETS:
            key = (("idle", bucket), *scope)
            _waiting[key] = int(by_age.get(bucket, 0))
    except Exception:
        logger.debug("could not record waiting heads", exc_info=True)


def record_only_if_exported() -> None:
    """For a process of its own (`langgraph-repair`): count only where OpenTelemetry was
    set up to export, by the `OTEL_*` environment (as `opentelemetry-instrument` reads
    it) or by a loader that imported OpenTelemetry first. Elsewhere the counts could go
    nowhere, so OpenTelemetry is not even imported."""
    global _absent
    configured = any(name.startswith("OTEL_") for name in os.environ)
    if not configured and "opentelemetry" not in sys.modules:
        _absent = True


def _observe_waiting(options: Any) -> list[Any]:
    """The gauge's observations: the values the last runs set."""
    from opentelemetry.metrics import Observation

    return [Observation(count, dict(attributes)) for attributes, count in _waiting.items()]


def _start() -> tuple[Any, Any, Any, Any] | None:
    """The counters, made once; None (and nothing imported) without OpenTelemetry."""
    global _absent, _counters
    with _starting:
        if _counters is None and not _absent:
            _counters = _make_counters()
            _absent = _counters is None
        return _counters


def _make_counters() -> tuple[Any, Any, Any, Any] | None:
    try:
        if importlib.util.find_spec("opentelemetry") is None:
            return None
        from opentelemetry import metrics
    except ImportError:  # not installed, or only another distribution of the namespace
        return None
    meter = metrics.get_meter(METER, installed_version(_DISTRIBUTION))
    repairs = meter.create_counter(
        REPAIRS, unit="{repair}", description="Repaired message channels, per surface."
    )
    actions = meter.create_counter(
        ACTIONS, unit="{action}", description="Repair actions, per kind and surface."
    )
    lost = meter.create_counter(
        LOST_TYPES, unit="{type}", description="Stored types a load could not rebuild here."
    )
    pruned = meter.create_counter(
        PRUNED_ROWS, unit="{row}", description="Rows a prune deleted, per table and surface."
    )
    meter.create_observable_gauge(
        WAITING_HEADS,
        callbacks=[_observe_waiting],
        unit="{head}",
        description="Heads waiting on a human at the last whole scan, by how long idle.",
    )
    return repairs, actions, lost, pruned
