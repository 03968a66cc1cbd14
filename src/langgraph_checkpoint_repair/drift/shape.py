"""What of an application's graph decides where a stored thread can go on: its nodes
(and the channels that trigger each), its channels, its compiled interrupts and its
subgraphs. Read once from the compiled graph; the checks then need only this."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..compatibility import features

ALL = "*"
"""`interrupt_before="*"`: every node pauses."""


@dataclass(frozen=True)
class GraphShape:
    """The parts of a compiled graph that the checks and the re-targeting read."""

    nodes: Mapping[str, tuple[str, ...]]
    """Each node, with the channels that trigger it, sorted as LangGraph hashes them."""
    channels: frozenset[str]
    interrupt_before: frozenset[str] = frozenset()
    interrupt_after: frozenset[str] = frozenset()
    subgraphs: Mapping[str, GraphShape] = field(default_factory=dict)
    """The graph of each node that runs one, by node name."""
    state_types: frozenset[tuple[str, str]] = frozenset()
    """(module, name) of the classes its state declares, its subgraphs' too
    (`state_types`): with `--graph` they load as in the application."""
    delta_channels: Mapping[str, Any] = field(default_factory=dict)
    """Its `DeltaChannel`s by name: their reducers rebuild a stored delta channel that
    does not hold messages (`prune --compact`)."""

    @property
    def has_compiled_interrupts(self) -> bool:
        """Whether the graph pauses by itself (`interrupt_before`/`interrupt_after`)."""
        return bool(self.interrupt_before or self.interrupt_after)

    def triggers(self, node: str) -> tuple[str, ...]:
        return self.nodes.get(node, ())

    def all_channels(self) -> frozenset[str]:
        """Its channels and its subgraphs', however deep."""
        return self.channels.union(*(sub.all_channels() for sub in self.subgraphs.values()))


def shape_of(graph: Any) -> GraphShape:
    """The shape of a compiled graph (a `Pregel`), its subgraphs' too."""
    from .state_types import state_types

    nodes = {name: tuple(sorted(node.triggers)) for name, node in graph.nodes.items()}
    subgraphs = {name: shape_of(sub) for name, sub in _subgraphs(graph)}
    return GraphShape(
        nodes=nodes,
        channels=frozenset(graph.channels),
        interrupt_before=_interrupt_nodes(graph.interrupt_before_nodes, nodes),
        interrupt_after=_interrupt_nodes(graph.interrupt_after_nodes, nodes),
        subgraphs=subgraphs,
        state_types=state_types(graph).union(*(s.state_types for s in subgraphs.values())),
        delta_channels=_delta_channels(graph),
    )


def _delta_channels(graph: Any) -> dict[str, Any]:
    """The graph's own delta channels (none on a LangGraph without them)."""
    parts = features.delta_parts()
    if parts is None:
        return {}
    return {name: ch for name, ch in graph.channels.items() if isinstance(ch, parts.channel)}


def _interrupt_nodes(names: Any, nodes: Mapping[str, Any]) -> frozenset[str]:
    if names == ALL:
        return frozenset(nodes)
    return frozenset(names or ())


def _subgraphs(graph: Any) -> list[tuple[str, Any]]:
    """The graph's direct subgraphs by node name; none where LangGraph cannot list them."""
    try:
        return [(name.split("|")[0], sub) for name, sub in graph.get_subgraphs()]
    except Exception:  # a node LangGraph cannot introspect: its subgraph goes unchecked
        return []


def as_shape(graph: Any) -> GraphShape:
    """A `GraphShape` from what an API caller hands over: a shape, a compiled graph, or
    a `StateGraph` builder (compiled here, without a checkpointer)."""
    if isinstance(graph, GraphShape):
        return graph
    compile_ = getattr(graph, "compile", None)
    if not hasattr(graph, "nodes") or not hasattr(graph, "channels"):
        raise TypeError(f"graph must be a StateGraph or a compiled graph, not {graph!r}")
    if callable(compile_) and not hasattr(graph, "interrupt_before_nodes"):
        graph = compile_()
    return shape_of(graph)


def checked_renames(
    renames: Mapping[str, str], graph: GraphShape | None, *, needs_graph: bool = True
) -> dict[str, str]:
    """The operator's renames, refused (one line) where they cannot be meant: without a
    graph (where one `needs_graph`), to a node the graph lacks, from a node it still has."""
    if not isinstance(renames, Mapping):
        raise TypeError(f"renamed_nodes must be a mapping of OLD to NEW, not {renames!r}")
    if renames and graph is None and needs_graph:
        raise ValueError("a renamed node needs the graph it was renamed in (--graph)")
    for old, new in renames.items():
        if not isinstance(old, str) or not isinstance(new, str) or not old or not new:
            raise ValueError(f"a renamed node is OLD=NEW, two node names: not {old!r}={new!r}")
        if graph is None:
            continue
        if new not in graph.nodes:
            known = ", ".join(sorted(n for n in graph.nodes if not n.startswith("__")))
            raise ValueError(f"node {new!r} (renamed from {old!r}) is not in the graph ({known})")
        if old in graph.nodes:
            raise ValueError(f"node {old!r} is still in the graph: it was not renamed")
    return dict(renames)
