"""A real thread bricked for Claude by an unsigned thinking block (a stream cut
mid-thought, persisted): every run fails with the API's error until the wrapper
with `provider="anthropic"` loads it repaired, on every real saver. Real LangGraph
graph, real savers; only the chat model is a fake."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support import claude_threads
from tests.support.agents import thread
from tests.support.claude_model import INVALID_SIGNATURE, AnthropicBadRequest, claude
from tests.support.claude_threads import ANTHROPIC, ask, brick, bricked_history, chat_graph
from tests.support.stores import Store

saver = claude_threads.saver  # the fixture: a SqliteSaver on a fresh file


def test_the_stored_thread_fails_on_every_run(saver: SqliteSaver) -> None:
    config = brick(saver)
    for _ in range(2):
        with pytest.raises(AnthropicBadRequest, match=f"messages.3.content.0: {INVALID_SIGNATURE}"):
            ask(saver, config, claude(AIMessage("You're welcome.")))
    plain_wrapper = PatchingCheckpointer(saver)  # pairing alone does not see it
    with pytest.raises(AnthropicBadRequest, match=INVALID_SIGNATURE):
        ask(plain_wrapper, config, claude(AIMessage("You're welcome.")))


def test_the_wrapper_with_provider_anthropic_runs_it_again(saver: SqliteSaver) -> None:
    config = brick(saver)
    stored = saver.get_tuple(config)
    assert stored is not None
    before = stored.checkpoint["channel_values"]["messages"]
    model = claude(AIMessage("You're welcome."))
    out = ask(PatchingCheckpointer(saver, policy=ANTHROPIC), config, model)
    assert out["messages"][-1].content == "You're welcome."
    seen = model.received[-1]
    assert seen[1].content == before[1].content  # the signed turn, byte for byte
    assert seen[3].content == [{"type": "text", "text": "Rain in Oslo."}]
    assert [m.id for m in seen] == [m.id for m in before] + ["h3"]
    # The next write stored the repaired history: the raw saver runs the thread too.
    ask(saver, config, claude(AIMessage("Bye.")))


async def test_every_saver_loads_the_thread_repaired_through_the_wrapper(store: Store) -> None:
    config = thread()
    graph = chat_graph(claude(), store.saver)
    await store.update_state(graph, config, {"messages": bricked_history()}, "chat")
    wrapper = PatchingCheckpointer(store.saver, policy=ANTHROPIC)
    tup = await store.get_tuple(wrapper, config)
    raw = await store.get_tuple(store.saver, config)
    assert tup is not None and raw is not None
    assert tup.checkpoint["channel_values"]["messages"][1].content == [
        {"type": "text", "text": "Rain in Oslo."}
    ]
    assert raw.checkpoint["channel_values"]["messages"][1].content[0]["type"] == "thinking"
