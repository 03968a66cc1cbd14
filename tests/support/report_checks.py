"""The counters of a run's summary agree with each other, whatever the run found.

Every `scan` and `repair` summary the suite makes is checked: in-process through
`RunReport.to_json` (tests/conftest.py), in a child process through `last_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def inconsistencies(summary: Mapping[str, Any]) -> list[str]:
    """What in a `scan`, `repair` or `prune` summary disagrees with itself (none for other
    commands' objects)."""
    if "threads_pruned" in summary:
        return prune_inconsistencies(summary)
    if "threads_needing_repair" not in summary:
        return []
    scanned = summary["threads_scanned"]
    needing = summary["threads_needing_repair"]
    repaired = summary["threads_repaired"]
    actions = sum(summary["actions"].values())
    found = []
    if repaired > needing:
        found.append(f"threads_repaired {repaired} > threads_needing_repair {needing}")
    if needing > scanned:
        found.append(f"threads_needing_repair {needing} > threads_scanned {scanned}")
    if actions and not repaired:
        found.append(f"{actions} actions, but no thread repaired")
    if summary["writes_rewritten"] and not repaired:
        found.append("writes rewritten, but no thread repaired")
    return found


def prune_inconsistencies(summary: Mapping[str, Any]) -> list[str]:
    found = []
    pruned, scanned = summary["threads_pruned"], summary["threads_scanned"]
    if pruned + sum(summary["skipped"].values()) > scanned:
        found.append(f"threads pruned and skipped outnumber threads_scanned {scanned}")
    if summary["threads_deleted"] > pruned:
        found.append(f"threads_deleted {summary['threads_deleted']} > threads_pruned {pruned}")
    if summary["checkpoints_deleted"] < pruned:
        found.append(f"{pruned} threads pruned, {summary['checkpoints_deleted']} checkpoints")
    deleted = {"checkpoints": "checkpoints_deleted", "writes": "writes_deleted"}
    deleted["blobs"] = "blobs_deleted"
    for table, key in deleted.items():
        if bool(summary["bytes_freed"][table]) != bool(summary[key]):
            found.append(f"bytes_freed of {table} disagrees with {key}")
    return found


def assert_consistent(summary: Mapping[str, Any]) -> None:
    found = inconsistencies(summary)
    assert not found, f"the summary disagrees with itself: {'; '.join(found)}: {summary}"


ID_CODES = frozenset({"interrupt_id_shared", "interrupt_id_mismatch"})
"""The interrupt-id findings. LangGraph 1.2.19 and earlier give a task's later question
its first id, so on those releases a thread waiting on its second question also holds
`interrupt_id_shared`: tests about other findings leave these out."""


def apart_from_ids(findings: dict[str, Any]) -> dict[str, Any]:
    """A report's `findings` counts less the interrupt-id codes."""
    return {code: n for code, n in findings.items() if code not in ID_CODES}
