"""A stored head checked against the graph that will resume it (`--graph`). Pure.

LangGraph applies the newest graph to every stored thread. Where the head's next work
names a node that graph lacks (a pull task, an interrupt raised in the node, a pause
before it, pending Sends), LangGraph prepares nothing for it: the resume ends the thread
without that work (`node_missing`). A stored channel the graph lacks is never marked as
seen by a resume, so on a graph with compiled interrupts every resume pauses again
(`channel_missing`); elsewhere its value is simply never read (`channel_ignored`, said
but no gate failure). A finished head (no next work) is never flagged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from ..decoding.integrity import Finding
from ..in_flight import INTERRUPT_CHANNEL
from ..js.rows import is_js_checkpoint
from ..stale_answers import NULL_TASK_ID
from ..waiting import BRANCH_PREFIX, SENDS_CHANNEL, json_value, task_origins
from .shape import GraphShape

INTERRUPT_SEEN = "__interrupt__"
"""The `versions_seen` entry LangGraph keeps of the channels a resume went past."""


@dataclass(frozen=True)
class NextWork:
    """One piece of work the head runs next: the node, and how it is held."""

    node: str
    held_by: str
    """`pull` (its branch channel), `interrupt` (a question it asked), `send`."""
    channel: str
    task_id: str | None = None
    question: Any = None


def next_work(tup: CheckpointTuple) -> list[NextWork]:
    """The work LangGraph would prepare from the head, read without the graph."""
    checkpoint = tup.checkpoint
    work = [NextWork(node, "pull", BRANCH_PREFIX + node) for node in triggered_nodes(tup)]
    origins = task_origins(tup)
    for task_id, channel, value in tup.pending_writes or ():
        if channel == INTERRUPT_CHANNEL and task_id in origins:
            items = value if isinstance(value, (list, tuple)) else [value]
            question = getattr(items[0], "value", None) if items else None
            work.append(NextWork(origins[task_id].node, "interrupt", channel, task_id, question))
    sends = checkpoint.get("channel_values", {}).get(SENDS_CHANNEL)
    legacy = checkpoint.get("pending_sends")
    for send in [*_listed(sends), *_listed(legacy)]:
        node = getattr(send, "node", None)
        if isinstance(node, str):
            work.append(NextWork(node, "send", SENDS_CHANNEL))
    return work


def triggered_nodes(tup: CheckpointTuple) -> list[str]:
    """The nodes whose branch channel holds a value newer than the node has seen (as
    LangGraph triggers a pull task), or that a pending null-task write sends to."""
    checkpoint = tup.checkpoint
    values, versions = checkpoint.get("channel_values", {}), checkpoint["channel_versions"]
    seen = checkpoint.get("versions_seen", {})
    nodes = [
        channel[len(BRANCH_PREFIX) :]
        for channel, version in versions.items()
        if channel.startswith(BRANCH_PREFIX)
        and channel in values
        and newer(version, seen.get(channel[len(BRANCH_PREFIX) :], {}).get(channel))
    ]
    for task_id, channel, _ in tup.pending_writes or ():
        if task_id == NULL_TASK_ID and channel.startswith(BRANCH_PREFIX):
            nodes.append(channel[len(BRANCH_PREFIX) :])
    return list(dict.fromkeys(nodes))


def newer(version: Any, seen: Any) -> bool:
    """Whether `version` is past `seen` (None: never seen), as LangGraph compares them."""
    if seen is None:
        return True
    try:
        return bool(version > seen)
    except TypeError:  # versions of another type than the saver's: count as new
        return True


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def checked_findings(tup: CheckpointTuple, graph: GraphShape | None) -> tuple[Finding, ...]:
    """`drift_findings` where a graph was given and the head is one of a Python graph: a
    LangGraph.js thread (integer versions) runs a JS graph, which cannot be loaded here."""
    if graph is None or is_js_checkpoint(tup.checkpoint):
        return ()
    return drift_findings(tup, graph)


def drift_findings(tup: CheckpointTuple, graph: GraphShape) -> tuple[Finding, ...]:
    """What in the head the graph would silently skip or trap; none for a finished head."""
    work = next_work(tup)
    if not work:
        return ()
    ns = str(tup.config["configurable"].get("checkpoint_ns", ""))
    found = graph_at(graph, ns)
    if isinstance(found, str):
        return (_gone_namespace(ns, found),)
    if found is None:
        return ()
    missing = {
        item.node: item for item in sorted(work, key=_telling) if item.node not in found.nodes
    }
    trapped = tuple(_channels_missing(tup, found))
    ignored = _channels_ignored(tup, found, {f.channel for f in trapped})
    return (*map(_node_missing, missing.values()), *trapped, *ignored)


def _telling(item: NextWork) -> int:
    """Sorts the work of a node so that what says most about it comes last (and wins):
    a question asked there, then sends, then its branch channel."""
    return {"pull": 0, "send": 1, "interrupt": 2}.get(item.held_by, 0)


def graph_at(graph: GraphShape, ns: str) -> GraphShape | str | None:
    """The graph that runs namespace `ns`; the name of its node when a parent graph no
    longer has it; None where it cannot be told (a subgraph LangGraph does not list)."""
    for segment in ns.split("|") if ns else ():
        node = segment.split(":")[0]
        if node not in graph.nodes:
            return node
        sub = graph.subgraphs.get(node)
        if sub is None:
            return None
        graph = sub
    return graph


def _gone_namespace(ns: str, node: str) -> Finding:
    error = (
        f"node {node!r}, which runs this subgraph, is not in the graph: "
        "a resume never reaches this namespace again"
    )
    return Finding("node_missing", "", node=node, error=error)


def _node_missing(item: NextWork) -> Finding:
    if item.held_by == "interrupt":
        text = json_value(item.question)
        held = f"its question {text!r} waits on an answer there"
    elif item.held_by == "send":
        held = "pending Sends go to it"
    else:
        held = "it runs next"
    error = (
        f"node {item.node!r} is not in the graph, and {held}: "
        "a resume ends the thread without running it"
    )
    return Finding("node_missing", item.channel, item.task_id, node=item.node, error=error)


def _channels_missing(tup: CheckpointTuple, graph: GraphShape) -> Iterator[Finding]:
    """Stored channels the graph lacks that its compiled interrupts would trip on."""
    if not graph.has_compiled_interrupts:
        return
    checkpoint = tup.checkpoint
    seen = checkpoint.get("versions_seen", {}).get(INTERRUPT_SEEN, {})
    for channel, version in trapping(checkpoint["channel_versions"], seen, graph):
        error = (
            f"channel {channel!r} is not in the graph: every resume pauses again "
            f"(version {version!r} is never marked as seen)"
        )
        yield Finding("channel_missing", channel, error=error)


def _channels_ignored(
    tup: CheckpointTuple, graph: GraphShape, trapped: set[str]
) -> Iterator[Finding]:
    """Stored keys holding a value that the graph lacks and that trap nothing: the new
    release neither reads nor writes them (a human's review kept under a removed key is
    silently forgotten). Reported, never a gate failure."""
    for channel in sorted(tup.checkpoint.get("channel_values", {})):
        internal = channel.startswith(("__", BRANCH_PREFIX))
        if internal or channel in graph.channels or channel in trapped:
            continue
        error = f"channel {channel!r} holds a value the graph does not read: it is ignored"
        yield Finding("channel_ignored", channel, error=error)


def trapping(
    versions: Mapping[str, Any], seen: Mapping[str, Any], graph: GraphShape
) -> Iterator[tuple[str, Any]]:
    """Each stored channel the graph lacks whose version is past the last resume's."""
    for channel, version in versions.items():
        if channel in graph.channels or channel.startswith(BRANCH_PREFIX):
            continue  # a missing node's branch channel is `node_missing`'s
        if newer(version, seen.get(channel)):
            yield channel, version
