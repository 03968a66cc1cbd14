"""Thread stores seeded by real agents: clean, bricked, in-flight, orphan, misplaced
and subgraph threads, as production stores hold them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from tests.support.agents import ToolBox, chat_graph, react_agent
from tests.support.fakes import calls, model
from tests.support.histories import ai, human, tool
from tests.support.stores import Store


@dataclass
class Seeded:
    """Thread ids by what is wrong with them."""

    threads: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, thread_id: str) -> None:
        self.threads.setdefault(kind, []).append(thread_id)

    def of(self, *kinds: str) -> list[str]:
        return [t for kind in kinds for t in self.threads.get(kind, [])]

    @property
    def broken(self) -> list[str]:
        return self.of("bricked", "orphan", "misplaced", "subgraph")


def config(thread_id: str, ns: str = "") -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


async def seed(store: Store, bricked: int = 2, prefix: str = "") -> Seeded:
    """Seed every kind of thread through real graphs on the store's saver."""
    seeded = Seeded()
    box, saver = ToolBox(), store.saver
    finished = react_agent(model(calls(("get_weather", "c1"), city="Oslo"), "Sunny."), box, saver)
    await store.invoke(finished, {"messages": [HumanMessage("Weather?")]}, config(f"{prefix}clean"))
    seeded.add("clean", f"{prefix}clean")
    for n in range(bricked):
        await brick(store, f"{prefix}bricked-{n}")
        seeded.add("bricked", f"{prefix}bricked-{n}")
    replies = model(calls(("get_weather", "c1"), city="Oslo"))
    waiting = react_agent(replies, box, saver, interrupt_before=["tools"])
    await store.invoke(
        waiting, {"messages": [HumanMessage("Weather?")]}, config(f"{prefix}in-flight")
    )
    seeded.add("in_flight", f"{prefix}in-flight")
    chat = chat_graph(saver)
    for kind, history in HAND_BROKEN.items():
        await store.update_state(chat, config(f"{prefix}{kind}"), {"messages": history}, "chat")
        seeded.add(kind, f"{prefix}{kind}")
    await put_in_namespace(store, f"{prefix}subgraph", "researcher:1", SUBGRAPH_HISTORY)
    seeded.add("subgraph", f"{prefix}subgraph")
    return seeded


HAND_BROKEN = {
    "orphan": [human("a"), tool("zz"), ai("a1", text="hello")],
    "misplaced": [human("a"), ai("a1", "c1"), human("b"), tool("c1")],
}
SUBGRAPH_HISTORY = [human("a"), ai("a1", "c1"), human("b")]


async def brick(store: Store, thread_id: str, run_config: Any = None) -> None:
    """Interrupt before the tools, then send new input: the run fails, the thread is
    bricked. `run_config` (default: the thread's alone) is the config both runs get."""
    replies = model(calls(("get_weather", "c1"), city="Rome"))
    agent = react_agent(replies, ToolBox(), store.saver, interrupt_before=["tools"])
    run_config = run_config or config(thread_id)
    await store.invoke(agent, {"messages": [HumanMessage("Weather?")]}, run_config)
    with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY"):
        await store.invoke(agent, {"messages": [HumanMessage("Never mind.")]}, run_config)


async def put_in_namespace(store: Store, thread_id: str, ns: str, messages: list[Any]) -> None:
    """A subgraph's finished checkpoint in its own namespace, stored with the saver's put."""
    saver = store.saver
    checkpoint = empty_checkpoint()
    version = saver.get_next_version(None, None)
    checkpoint["channel_values"] = {"messages": messages}
    checkpoint["channel_versions"] = {"messages": version}
    metadata: Any = {"source": "loop", "step": 1}
    args = (config(thread_id, ns), checkpoint, metadata, {"messages": version})
    if store.is_async:
        await saver.aput(*args)
    else:
        saver.put(*args)


BROKEN_THREADS = 300


async def seed_broken(store: Store, count: int) -> list[str]:
    """`count` threads whose head has a call answered by nothing."""
    thread_ids = [f"race-{n:04}" for n in range(count)]
    for thread_id in thread_ids:
        await put_in_namespace(store, thread_id, "", SUBGRAPH_HISTORY)
    return thread_ids
